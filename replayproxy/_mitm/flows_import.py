"""mitmproxy ``.flows`` files (``mitmdump -w``, the UI's "Save") as a Cassette.

Read with ``mitmproxy.io.FlowReader`` (the format of mitmproxy 11 and 12 alike, and the older
versions it migrates). Each HTTP flow keeps its bytes as on the wire (``raw_content``:
content-encoding untouched) and its timestamps: the head at ``response.timestamp_start`` and the
last byte at ``response.timestamp_end``, counted from ``request.timestamp_end`` (the request
sent); the events in between are spread evenly, as mitmproxy keeps no frame times. A flow
whose body was streamed through (``stream_large_bodies``, no body stored) is refused by name.
The rest is the pure :mod:`replayproxy._core.importers.build`.
"""

from __future__ import annotations

import io

from mitmproxy import http
from mitmproxy.exceptions import FlowReadException
from mitmproxy.io import FlowReader

from replayproxy._core.cassette.model import Cassette, Request
from replayproxy._core.importers.build import Built, Exchange, ImportFailed, build
from replayproxy._core.importers.losses import assemble
from replayproxy._core.importers.timing import TimingModel

__all__ = ["import_flows"]

_NS_PER_S = 1_000_000_000


def _ns(later: float | None, sent: float) -> int | None:
    return None if later is None else max(0, round((later - sent) * _NS_PER_S))


def _exchange(name: str, index: int, flow: http.HTTPFlow) -> Exchange:
    req, resp = flow.request, flow.response
    where = f"{name}: interaction {index} ({req.method} {req.pretty_url})"
    if req.raw_content is None:
        raise ImportFailed(f"{where}: the request body was not stored (streamed through)")
    request = Request(
        req.method, req.pretty_url, req.http_version, tuple(req.headers.fields), req.raw_content
    )
    if resp is None:
        return Exchange(where, request, recorded_at=req.timestamp_start)
    if resp.raw_content is None:
        raise ImportFailed(f"{where}: the response body was not stored (streamed through)")
    sent = req.timestamp_end or req.timestamp_start
    return Exchange(
        where, request, resp.status_code, resp.reason, resp.http_version,
        tuple(resp.headers.fields), resp.raw_content,
        _ns(resp.timestamp_start, sent), _ns(resp.timestamp_end, sent), req.timestamp_start,
    )  # fmt: skip


def import_flows(data: bytes, name: str, model: TimingModel | None = None) -> Cassette:
    """The cassette of a ``.flows`` file's bytes (HTTP flows; others are skipped and listed)."""
    model = model or TimingModel()
    built: list[Built] = []
    skipped = 0
    try:
        for flow in FlowReader(io.BytesIO(data)).stream():
            if isinstance(flow, http.HTTPFlow):
                built.append(build(_exchange(name, len(built), flow), model))
            else:
                skipped += 1
    except FlowReadException as e:
        raise ImportFailed(f"{name}: not a mitmproxy flow file ({e})") from None
    if not built:
        raise ImportFailed(f"{name}: no HTTP flows in it")
    cassette = assemble(built, f"mitmproxy {name}", model)
    if skipped:
        cassette = Cassette(
            cassette.interactions, (*cassette.meta, ("import.skipped", str(skipped)))
        )
    return cassette
