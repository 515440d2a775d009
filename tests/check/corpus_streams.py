"""The regression corpus in tests/check/corpus: real provider streams and official SDK test
fixtures, framed as the provider sends them, with the source each was taken from.

``MANIFEST.toml`` lists every stream: its file (or a payload file shipped in
``replayproxy/testing/payloads``), the provider grammar, the framing, the dialect the report
must name, and where it came from (repository, path, commit, licence). A file that holds
several recorded responses back to back (a multi-step test fixture) names the payload type
that starts each one in ``split_at``.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from replayproxy.core.wire import eventstream

__all__ = ["CORPUS", "MANIFEST", "CorpusStream", "frame", "load_corpus"]

CORPUS = Path(__file__).resolve().parent / "corpus"
MANIFEST = CORPUS / "MANIFEST.toml"


@dataclass(frozen=True)
class CorpusStream:
    """One corpus stream, framed: ``body`` is the wire body a client would read."""

    name: str
    provider: str
    dialect: str
    kind: str
    source: str  # "repo@commit:path"
    license: str
    body: bytes


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
    if provider == "gemini":
        return b"".join(b"data: " + p + b"\r\n\r\n" for p in payloads)
    if provider == "bedrock-converse":
        return _bedrock(payloads)
    raise ValueError(f"no framing for {provider!r}")


def _raw(entry: dict[str, str]) -> bytes:
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


def load_corpus() -> list[CorpusStream]:
    """Every stream of the manifest, framed (a multi-response file gives one per response)."""
    streams = []
    for entry in tomllib.loads(MANIFEST.read_text())["stream"]:
        raw = _raw(entry)
        name = entry.get("file") or entry["package_file"]
        bodies: list[tuple[str, bytes]]
        if entry["framing"] == "payloads":
            payloads = [line for line in raw.splitlines() if line.strip()]
            if "split_at" in entry:
                turns = _turns(payloads, entry["split_at"])
                bodies = [(f"{name}#{i}", frame(entry["provider"], t)) for i, t in enumerate(turns)]
            else:
                bodies = [(name, frame(entry["provider"], payloads))]
        else:  # "sse": stored without (all of) its final blank line, as the SDK keeps it
            bodies = [(name, raw.rstrip(b"\n") + b"\n\n")]
        for stream_name, body in bodies:
            streams.append(
                CorpusStream(
                    stream_name,
                    entry["provider"],
                    entry["dialect"],
                    entry["kind"],
                    f"{entry['repo']}@{entry['commit'][:12]}:{entry['path']}",
                    entry["license"],
                    body,
                )
            )
    return streams
