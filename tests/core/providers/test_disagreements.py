"""Measurement: every provider detector of today run on every real stream, and where they
disagree with each other or with the right answer (issue 23)."""

from __future__ import annotations

from urllib.parse import urlsplit

from replayproxy.core.check import StreamChecker, detect
from replayproxy.core.faults import provider as fault_provider
from replayproxy.core.matching.equivalence import api_of
from replayproxy.core.wire.error_body import error_family
from tests.core.providers.served import SERVED, ServedStream, interaction

_ERROR_FAMILY = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "bedrock-converse": "bedrock",
    "bedrock-invoke": "bedrock",
    "bedrock-invoke-native": "bedrock",
}


def _answers(s: ServedStream) -> dict[str, object]:
    path = urlsplit(s.url).path
    checked = detect(s.url, content_type=s.content_type, request_headers=dict(s.headers))
    dialect = None
    if checked is not None:
        checker = StreamChecker(checked, url=s.url)
        checker.feed(s.body)
        checker.close()
        dialect = checker.dialect
    return {
        "check": checked,
        "faults": fault_provider.detect(interaction(s)),
        "error_family": error_family(path),
        "api_of": api_of(path),
        "dialect": dialect,
    }


def disagreements() -> list[str]:
    """One line per stream and detector that does not give the right answer."""
    out = []
    for s in SERVED:
        got = _answers(s)
        family = _ERROR_FAMILY[s.provider]
        wrong = []
        if got["check"] != s.provider:
            wrong.append(f"check={got['check']}")
        faults_want = "bedrock" if family == "bedrock" else s.provider
        if got["faults"] != faults_want:
            wrong.append(f"faults={got['faults']}")
        if got["error_family"] != family:
            wrong.append(f"error_family={got['error_family']}")
        api_want = s.provider if s.provider in ("openai-chat", "openai-responses") else None
        api_want = "anthropic" if s.provider == "anthropic" else api_want
        if got["api_of"] != api_want:
            wrong.append(f"api_of={got['api_of']}")
        if got["dialect"] != s.dialect:
            wrong.append(f"dialect={got['dialect']!r}")
        if wrong:
            out.append(f"{s.name}: {', '.join(wrong)}")
    return out


def test_todays_detectors_disagree_on_these_real_streams() -> None:
    """The detectors of today (checker, faults, error bodies, equivalence, dialect naming)
    give a wrong or conflicting answer on exactly these served streams."""
    assert disagreements() == [
        "vertex-claude: error_family=gemini, api_of=None",
        "bedrock-invoke-nova: check=bedrock-invoke, "
        "dialect='Anthropic on Bedrock (InvokeModelWithResponseStream)'",
        "mantle-chat: dialect='OpenAI'",
        "mantle-responses: dialect='OpenAI'",
        "snowflake-chat: dialect='OpenAI'",
    ]
