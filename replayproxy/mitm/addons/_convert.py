"""mitmproxy objects -> replayproxy's model: the one conversion both addons use."""

from __future__ import annotations

from mitmproxy import http

from replayproxy.core.model import Request

__all__ = ["request_of"]


def request_of(flow_request: http.Request) -> Request:
    """The model :class:`Request` of a mitmproxy request: full URL (in reverse mode the
    upstream URL), headers as raw ``(bytes, bytes)`` pairs in wire order, body as sent."""
    return Request(
        method=flow_request.method,
        url=flow_request.url,
        http_version=flow_request.http_version,
        headers=tuple((bytes(k), bytes(v)) for k, v in flow_request.headers.fields),
        body=flow_request.raw_content or b"",
    )
