"""The URL the recorder and the replayer take from a mitmproxy request (``_convert.url_of``):
an IPv6 host keeps its brackets, every other host is mitmproxy's own ``Request.url``."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from hypothesis import given
from hypothesis import strategies as st
from mitmproxy.test import tutils

from replayproxy._core.cassette.model import Request
from replayproxy._core.cassette.validate import check_interaction
from replayproxy._mitm.addons._convert import request_of, url_of
from replayproxy.testing import interaction


def _request(host: str, port: int, scheme: str = "http", path: str = "/v1/x?a=1") -> object:
    return tutils.treq(scheme=scheme, host=host, port=port, path=path.encode())


@given(
    address=st.ip_addresses(v=6),
    port=st.integers(min_value=1, max_value=65535),
    scheme=st.sampled_from(["http", "https"]),
)
def test_any_ipv6_host_and_port_parse_back(
    address: ipaddress.IPv6Address, port: int, scheme: str
) -> None:
    """For every IPv6 address and port, the URL parses back to that host and port (the
    default port left out, as mitmproxy does for other hosts)."""
    url = url_of(_request(str(address), port, scheme))  # type: ignore[arg-type]
    parts = urlsplit(url)
    assert ipaddress.ip_address(parts.hostname or "") == address
    assert parts.port == (None if port == {"http": 80, "https": 443}[scheme] else port)
    assert parts.path == "/v1/x" and parts.query == "a=1"


@given(
    host=st.sampled_from(["127.0.0.1", "api.openai.com", "localhost"]),
    port=st.integers(min_value=1, max_value=65535),
)
def test_other_hosts_are_mitmproxys_url(host: str, port: int) -> None:
    """IPv4 addresses and names: exactly mitmproxy's ``Request.url``."""
    req = _request(host, port)
    assert url_of(req) == req.url  # type: ignore[attr-defined, arg-type]


def test_the_recorded_request_of_an_ipv6_upstream_is_storable() -> None:
    """What ``request_of`` makes of a request to ``[::1]`` passes the cassette's checks (it
    used to be refused: ``request.url 'http://::1:18006/v1/json' does not parse``)."""
    model: Request = request_of(_request("::1", 18006, path="/v1/json"))  # type: ignore[arg-type]
    assert model.url == "http://[::1]:18006/v1/json"
    check_interaction(interaction([b"{}"], url=model.url))
