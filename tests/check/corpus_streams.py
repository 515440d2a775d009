"""The regression corpus in tests/check/corpus: real provider streams and official SDK test
fixtures, framed as the provider sends them, with the request each answered and the source
each was taken from.

``MANIFEST.toml`` lists every stream: its file (or a payload file shipped in
``replayproxy/testing/payloads``), the provider grammar, the framing, the dialect the report
must name, the host (provider or server) it was recorded from, the request URL, and where it
came from (repository, path, commit, licence). A file that holds several recorded responses
back to back (a multi-step test fixture) names the payload type that starts each one in
``split_at``.

Framings: ``payloads`` (one JSON payload a line, framed here as the provider frames them),
``sse`` (an SSE body stored without its final blank line, as the Anthropic SDK keeps its
fixtures), ``body`` (the response body exactly as recorded: an SSE body from a cassette) and
``ndjson`` (a newline-delimited JSON body exactly as recorded: Ollama's native API). An entry
whose response was not an event stream (Gemini's JSON array) names its ``content_type``.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final

from replayproxy._core.wire import eventstream

__all__ = [
    "CORPUS",
    "FRAMINGS",
    "MANIFEST",
    "CorpusStream",
    "content_type",
    "frame",
    "load_corpus",
    "manifest",
]

CORPUS = Path(__file__).resolve().parent / "corpus"
MANIFEST = CORPUS / "MANIFEST.toml"
FRAMINGS: Final = frozenset({"payloads", "sse", "body", "ndjson"})

_EVENTSTREAM = "application/vnd.amazon.eventstream"
_NDJSON = "application/x-ndjson"
_SSE = "text/event-stream"


@dataclass(frozen=True)
class CorpusStream:
    """One corpus stream, framed: ``body`` is the wire body a client would read, ``url`` the
    request URL it answered (the provider's endpoint), ``host`` the provider or server it was
    recorded from, ``content_type`` the response's media type."""

    name: str
    provider: str
    dialect: str
    kind: str
    source: str  # "repo@commit:path"
    license: str
    body: bytes
    url: str = ""
    host: str = ""
    framing: str = ""
    content_type: str = _SSE
    errors: tuple[str, ...] = ()  # error rules real clients break on (the SDK oracle's word)


def _named(payloads: list[bytes]) -> bytes:
    return b"".join(
        b"event: " + json.loads(p)["type"].encode() + b"\ndata: " + p + b"\n\n" for p in payloads
    )


def _bedrock(payloads: list[bytes]) -> bytes:
    out = []
    for p in payloads:
        (key,) = json.loads(p)
        prefix = b'{"' + key.encode() + b'":'
        out.append(eventstream.encode_event(key, p[len(prefix) : -1]))
    return b"".join(out)


def frame(provider: str, payloads: list[bytes]) -> bytes:
    """Frame raw JSON payloads as ``provider`` does on the wire (bytes of each kept as is)."""
    if provider == "openai-chat":
        return b"".join(b"data: " + p + b"\n\n" for p in payloads) + b"data: [DONE]\n\n"
    if provider in ("anthropic", "openai-responses"):
        return _named(payloads)
    if provider == "cohere-v2":
        # Cohere's v2 chat stream names each event by its type and ends with [DONE], as the
        # recorded body cohere-v2-chat-stream.sse shows
        return _named(payloads) + b"data: [DONE]\n\n"
    if provider == "gemini":
        return b"".join(b"data: " + p + b"\r\n\r\n" for p in payloads)
    if provider == "bedrock-converse":
        return _bedrock(payloads)
    raise ValueError(f"no framing for {provider!r}")


def content_type(provider: str, framing: str) -> str:
    """The response Content-Type a stream of ``provider`` in ``framing`` is served with."""
    if framing == "ndjson":
        return _NDJSON
    if provider.startswith("bedrock"):
        return _EVENTSTREAM
    return _SSE


def _raw(entry: dict[str, Any]) -> bytes:
    if "package_file" in entry:
        files = resources.files("replayproxy.testing").joinpath("payloads")
        return files.joinpath(entry["package_file"]).read_bytes()
    return (CORPUS / entry["file"]).read_bytes()


def _turns(payloads: list[bytes], first_type: str) -> list[list[bytes]]:
    """Cut a file holding several recorded responses back to back (a multi-step fixture) at
    each payload whose ``type`` is ``first_type``."""
    turns: list[list[bytes]] = []
    for p in payloads:
        if json.loads(p).get("type") == first_type or not turns:
            turns.append([])
        turns[-1].append(p)
    return turns


def _bodies(entry: dict[str, Any], name: str, raw: bytes) -> list[tuple[str, bytes]]:
    framing = entry["framing"]
    if framing == "payloads":
        payloads = [line for line in raw.splitlines() if line.strip()]
        if "split_at" in entry:
            turns = _turns(payloads, entry["split_at"])
            return [(f"{name}#{i}", frame(entry["provider"], t)) for i, t in enumerate(turns)]
        return [(name, frame(entry["provider"], payloads))]
    if framing == "sse":  # stored without (all of) its final blank line, as the SDK keeps it
        return [(name, raw.rstrip(b"\n") + b"\n\n")]
    if framing in ("body", "ndjson"):  # the recorded body, byte for byte
        return [(name, raw)]
    raise ValueError(f"{name}: unknown framing {framing!r}; choose one of {sorted(FRAMINGS)}")


def manifest() -> list[dict[str, Any]]:
    """The manifest's stream entries, as written."""
    entries: list[dict[str, Any]] = tomllib.loads(MANIFEST.read_text())["stream"]
    return entries


def load_corpus() -> list[CorpusStream]:
    """Every stream of the manifest, framed (a multi-response file gives one per response)."""
    streams = []
    for entry in manifest():
        name = entry.get("file") or entry["package_file"]
        for stream_name, body in _bodies(entry, name, _raw(entry)):
            streams.append(
                CorpusStream(
                    stream_name,
                    entry["provider"],
                    entry["dialect"],
                    entry["kind"],
                    f"{entry['repo']}@{entry['commit'][:12]}:{entry['path']}",
                    entry["license"],
                    body,
                    url=entry.get("url", ""),
                    host=entry.get("host", ""),
                    framing=entry["framing"],
                    content_type=entry.get("content_type")
                    or content_type(entry["provider"], entry["framing"]),
                    errors=tuple(entry.get("errors", ())),
                )
            )
    return streams
