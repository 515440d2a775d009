"""HAR 1.2 files (browser "Save all as HAR", Charles, Fiddler) as a Cassette (pure).

Per entry: ``request`` (method, url, httpVersion, headers, ``postData.text``), ``response``
(status, statusText, headers, ``content.text`` with ``content.encoding: "base64"`` for bytes)
and ``timings`` in milliseconds (``-1``: not available). The response head is placed at
``send + wait`` after the request started being sent and the last byte ``receive`` later;
the events in between are spread evenly (a HAR keeps no frame times).

Browsers store the *decoded* body but keep the ``content-encoding`` header: when the bytes are
not actually compressed, :func:`~.build.drop_decoded_encoding` drops that header (and lists
it) so a client does not try to gunzip plain text.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from replayproxy._core.cassette.model import Cassette, Header, Request
from replayproxy._core.importers.build import Built, Exchange, ImportFailed, build
from replayproxy._core.importers.losses import assemble
from replayproxy._core.importers.timing import TimingModel

__all__ = ["import_har"]

_NS_PER_MS = 1_000_000


def _sub(parent: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = parent.get(key)
    return value if isinstance(value, Mapping) else {}


def _headers(value: object) -> tuple[Header, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(
        (str(h.get("name", "")).encode("latin-1", "replace"), str(h.get("value", "")).encode())
        for h in value
        if isinstance(h, Mapping) and not str(h.get("name", "")).startswith(":")
    )


def _version(value: object) -> str:
    text = str(value or "").upper()
    return {"HTTP/2": "HTTP/2.0", "H2": "HTTP/2.0", "HTTP/3": "HTTP/3", "H3": "HTTP/3"}.get(
        text, text if text.startswith("HTTP/") else "HTTP/1.1"
    )


def _ms(timings: Mapping[str, Any], key: str) -> float:
    value = timings.get(key, -1)
    return float(value) if isinstance(value, int | float) and value >= 0 else 0.0


def _body(content: Mapping[str, Any], where: str) -> bytes:
    text = content.get("text")
    if text is None:
        return b""
    if content.get("encoding") == "base64":
        try:
            return base64.b64decode(str(text), validate=True)
        except (binascii.Error, ValueError):
            raise ImportFailed(f"{where}: response content.text is not valid base64") from None
    return str(text).encode("utf-8", "surrogateescape")


def _started(value: object) -> float | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _entry(name: str, index: int, entry: object) -> Exchange:
    if not isinstance(entry, Mapping) or not isinstance(entry.get("request"), Mapping):
        raise ImportFailed(f"{name}: entry {index} has no request")
    req, resp = entry["request"], entry.get("response")
    method, url = str(req.get("method", "")), str(req.get("url", ""))
    where = f"{name}: interaction {index} ({method} {url})"
    post = _sub(req, "postData")
    request = Request(
        method, url, _version(req.get("httpVersion")), _headers(req.get("headers")),
        str(post.get("text") or "").encode("utf-8", "surrogateescape"),
    )  # fmt: skip
    started = _started(entry.get("startedDateTime"))
    if not isinstance(resp, Mapping) or not resp.get("status"):
        return Exchange(where, request, recorded_at=started)
    content = _sub(resp, "content")
    body = _body(content, where)
    timings = _sub(entry, "timings")
    head = _ms(timings, "send") + _ms(timings, "wait")
    last = head + _ms(timings, "receive")
    exchange = Exchange(
        where, request, int(resp["status"]), str(resp.get("statusText") or ""),
        _version(resp.get("httpVersion")), _headers(resp.get("headers")), body,
        round(head * _NS_PER_MS) if timings else None,
        round(last * _NS_PER_MS) if timings else None, started,
    )  # fmt: skip
    return exchange


def import_har(data: bytes, name: str, model: TimingModel | None = None) -> Cassette:
    """The cassette of a HAR file's bytes; ``name`` (the file) is used in every message."""
    model = model or TimingModel()
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError) as e:
        raise ImportFailed(f"{name}: not a HAR file (unparseable JSON: {e})") from None
    log = doc.get("log") if isinstance(doc, Mapping) else None
    if not isinstance(log, Mapping) or not isinstance(log.get("entries"), list):
        raise ImportFailed(f"{name}: not a HAR file (no log.entries list)")
    built: list[Built] = [build(_entry(name, i, e), model) for i, e in enumerate(log["entries"])]
    return assemble(built, f"har {name}", model)
