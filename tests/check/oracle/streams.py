"""The streams the oracle reads: every corpus stream with the URL it was sent to and the
content type its provider answers with, then the broken variants (:mod:`.variants`).

Written against the corpus loader's interface (``load_corpus()`` -> ``CorpusStream``): a
stream's ``url`` is used when the manifest gives one, else the provider's usual endpoint, so
new corpus entries (new providers, ``ndjson`` framing) are picked up as they come.
"""

from __future__ import annotations

from dataclasses import dataclass

from replayproxy._core.providers import definition
from tests.check.corpus_streams import load_corpus

__all__ = ["DEFAULT_URLS", "OracleStream", "corpus_streams", "key_of"]

DEFAULT_URLS = {
    "openai-chat": "https://api.openai.com/v1/chat/completions",
    "openai-responses": "https://api.openai.com/v1/responses",
    "anthropic": "https://api.anthropic.com/v1/messages",
    "gemini": "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
    ":streamGenerateContent?alt=sse",
    "bedrock-converse": "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
    "anthropic.claude-3-5-haiku-20241022-v1:0/converse-stream",
    "bedrock-invoke": "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
    "anthropic.claude-3-5-haiku-20241022-v1:0/invoke-with-response-stream",
}


@dataclass(frozen=True, slots=True)
class OracleStream:
    name: str  # the corpus file (``#n`` for one response of a multi-response file)
    provider: str  # the checker's provider id
    dialect: str
    url: str | None  # the request URL the checker detects the dialect from
    content_type: str
    body: bytes
    broken: str = ""  # for a variant: how it was broken ("" for a corpus stream)
    harmless: bool = False  # a variant every client was measured to read fine (a warning)


def _content_type(provider: str, body: bytes) -> str:
    try:
        return definition(provider).framing.value
    except ValueError:  # a provider the registry does not have yet (a native NDJSON API)
        return "application/x-ndjson" if body.lstrip()[:1] == b"{" else "text/event-stream"


def corpus_streams() -> list[OracleStream]:
    out = []
    for s in load_corpus():
        url = getattr(s, "url", None) or DEFAULT_URLS.get(s.provider)
        media = getattr(s, "content_type", None) or _content_type(s.provider, s.body)
        out.append(OracleStream(s.name, s.provider, s.dialect, url, media, s.body))
    return out


def key_of(index: int) -> str:
    """The ``x-oracle-stream`` value of the stream at ``index`` in the oracle's list."""
    return f"s{index}"
