"""Requests a known client sends on its own (litellm's cost map, openai-agents' trace upload):
the miss explanation names the client and the setting that stops them, and says nothing of the
kind for any other request."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Ending, EndKind, Interaction, Request
from replayproxy._core.matching.known_clients import KNOWN_SELF_FETCHES, SelfFetch, note_for
from replayproxy._core.matching.matcher import Matcher, Miss

COST_MAP = "/BerriAI/litellm/main/model_prices_and_context_window.json"
LITELLM_NOTE = (
    "this is a request litellm makes on its own (to raw.githubusercontent.com unless configured "
    "otherwise): litellm fetches its model cost map when imported; set "
    "LITELLM_LOCAL_MODEL_COST_MAP=True to use the copy bundled with it"
)
AGENTS_NOTE = (
    "this is a request openai-agents makes on its own (to api.openai.com unless configured "
    "otherwise): the OpenAI Agents SDK uploads its traces after each run; disable tracing "
    "(OPENAI_AGENTS_DISABLE_TRACING=1, or set_tracing_disabled(True)), or leave it: a failed "
    "upload is only logged by the SDK"
)


@pytest.mark.parametrize(
    ("request_text", "note"),
    [
        (f"GET {COST_MAP}", LITELLM_NOTE),
        (f"GET https://raw.githubusercontent.com{COST_MAP}", LITELLM_NOTE),
        (f"GET {COST_MAP}?token=x", LITELLM_NOTE),
        ("POST /v1/traces/ingest", AGENTS_NOTE),
        ("POST https://api.openai.com/v1/traces/ingest", AGENTS_NOTE),
        ("POST /proxy/v1/traces/ingest", AGENTS_NOTE),  # OPENAI_BASE_URL=.../proxy/v1
        ("POST /v1/chat/completions", None),
        ("GET /model_prices.json", None),
        ("GET /v1/traces/ingest-status", None),
        (f"GET {COST_MAP}.bak", None),
        ("GET /", None),
    ],
)
def test_note_for_known_self_fetches_only(request_text: str, note: str | None) -> None:
    """The note is given by path end (any host: both clients let a setting move it)."""
    assert note_for(request_text) == note


def _recorded(url: str) -> list[Interaction]:
    return [Interaction(Request("POST", url, body=b"{}"), None, Ending(EndKind.NO_RESPONSE, 0))]


def test_the_note_ends_every_kind_of_miss_explanation() -> None:
    """Empty cassette, a differing nearest interaction, or used up: the note is the last line
    of the explanation for a known self-fetch, and absent for a plain request."""
    cost_map = Request("GET", f"https://raw.githubusercontent.com{COST_MAP}")
    empty = Matcher([]).match(cost_map)
    differing = Matcher(_recorded("https://api.openai.com/v1/chat/completions")).match(cost_map)
    trace = Request("POST", "https://api.openai.com/v1/traces/ingest", body=b"{}")
    m = Matcher(_recorded("https://api.openai.com/v1/traces/ingest"))
    m.match(trace)
    used_up = m.match(trace)
    for miss, note in ((empty, LITELLM_NOTE), (differing, LITELLM_NOTE), (used_up, AGENTS_NOTE)):
        assert isinstance(miss, Miss)
        lines = miss.explain().splitlines()
        assert lines[-1] == note and lines.count(note) == 1
    plain = Request("POST", "https://api.openai.com/v1/embeddings", body=b"{}")
    other = Matcher(_recorded("https://api.openai.com/v1/chat/completions")).match(plain)
    assert isinstance(other, Miss) and "makes on its own" not in other.explain()


def test_every_entry_names_its_client_and_a_setting() -> None:
    """Each table row gives a client, a path end starting with '/', and a setting to type."""
    for known in KNOWN_SELF_FETCHES:
        assert known.client and known.path_end.startswith("/") and known.default_host
        assert "=" in known.stop or "(" in known.stop


_SEGMENT = st.text(st.characters(codec="ascii", exclude_characters="/?#"), max_size=12)


@given(
    st.sampled_from(KNOWN_SELF_FETCHES),
    st.lists(_SEGMENT, max_size=4),
    st.sampled_from(["", "?a=1"]),
)
def test_any_prefix_and_query_still_gets_the_note(
    known: SelfFetch, dirs: list[str], q: str
) -> None:
    """Property: whatever directories come before a known path end (a moved base URL) and
    whatever query follows, the request gets that client's note."""
    prefix = "".join(f"/{d}" for d in dirs)
    note = note_for(f"POST {prefix}{known.path_end}{q}")
    assert note is not None and note.startswith(f"this is a request {known.client} ")


@given(st.text(max_size=200))
def test_note_for_takes_any_text(text: str) -> None:
    """Property: any request text gives a note or None, never an exception."""
    assert note_for(text) is None or "makes on its own" in str(note_for(text))
