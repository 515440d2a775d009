"""mitmproxy objects -> replayproxy's model (a request, as both addons see it; a response head,
as the recorder stamps it), and the one header the recorder adds for an HTTP/1.1 client."""

from __future__ import annotations

from mitmproxy import http

from replayproxy._core.cassette.model import Request
from replayproxy._core.replay.assembly import ResponseHead

__all__ = ["frame_h2_for_h1_client", "head_of", "request_of", "url_of"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def url_of(flow_request: http.Request) -> str:
    """The request's full URL, an IPv6 host in brackets (RFC 3986 §3.2.2).

    mitmproxy's ``Request.url`` joins host and port as they are (``http://::1:8000/v1``, which
    no URL parser reads back), so a request to an IPv6 upstream could be neither recorded nor
    matched; its other hosts it writes like this.
    """
    host = flow_request.host
    if ":" not in host or flow_request.first_line_format == "authority":
        return flow_request.url
    scheme, port = flow_request.scheme, flow_request.port
    authority = f"[{host.strip('[]')}]"
    if port != _DEFAULT_PORTS.get(scheme):
        authority += f":{port}"
    path = "" if flow_request.path == "*" else flow_request.path
    return f"{scheme}://{authority}{path}"


def request_of(flow_request: http.Request) -> Request:
    """The model :class:`Request` of a mitmproxy request: full URL (in reverse mode the
    upstream URL; :func:`url_of`), headers as raw ``(bytes, bytes)`` pairs in wire order, body
    as sent."""
    return Request(
        method=flow_request.method,
        url=url_of(flow_request),
        http_version=flow_request.http_version,
        headers=tuple((bytes(k), bytes(v)) for k, v in flow_request.headers.fields),
        body=flow_request.raw_content or b"",
    )


def head_of(response: http.Response, offset_ns: int) -> ResponseHead:
    return ResponseHead(
        status=response.status_code,
        reason=response.reason,
        http_version=response.http_version,
        headers=tuple((bytes(k), bytes(v)) for k, v in response.headers.fields),
        offset_ns=offset_ns,
    )


def frame_h2_for_h1_client(flow: http.HTTPFlow) -> None:
    """Give an HTTP/1.1 client explicit chunked framing for an unframed h2 upstream body.

    mitmproxy forwards an h2 response to an h1 client without Content-Length or
    Transfer-Encoding, i.e. close-delimited, so a reset upstream would look like a clean end
    to the client (docs/contributing/mitmproxy-internals.md §4). The cassette keeps the upstream
    headers.
    """
    response = flow.response
    if (
        response is not None
        and response.http_version != "HTTP/1.1"
        and response.http_version != "HTTP/1.0"
        and flow.client_conn.alpn != b"h2"
        and "content-length" not in response.headers
        and "transfer-encoding" not in response.headers
    ):
        response.headers["transfer-encoding"] = "chunked"
