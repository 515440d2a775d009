"""The HTTP version a TLS client is answered with (core/replay/http_version.py): the option's
values, the recorded versions per host, and the ALPN protocol chosen from the client's offers."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Interaction
from replayproxy._core.replay.http_version import (
    H2,
    HTTP11,
    HttpVersion,
    choose_alpn,
    parse_http_version,
    recorded_versions,
    versions_by_host,
)
from replayproxy._core.replay.options import settings_from
from replayproxy._errors import UsageError
from replayproxy.testing import interaction, no_response, request

H2_REC = frozenset({"HTTP/2.0"})
H1_REC = frozenset({"HTTP/1.1"})
BOTH = H2_REC | H1_REC
BROWSER = (H2, HTTP11)  # curl --http2, Go, Java: h2 first
HTTPX = (HTTP11, H2)  # httpx http2=True offers http/1.1 first


def _recorded(url: str, version: str) -> Interaction:
    item = interaction(request=request("GET", url, body=b""))
    assert item.response is not None
    return replace(item, response=replace(item.response, http_version=version))


@pytest.mark.parametrize(
    ("option", "recorded", "offers", "expected"),
    [
        (HttpVersion.RECORDED, H1_REC, BROWSER, HTTP11),
        (HttpVersion.RECORDED, H2_REC, HTTPX, H2),
        (HttpVersion.RECORDED, H2_REC, BROWSER, H2),
        (HttpVersion.RECORDED, H2_REC, (HTTP11,), HTTP11),
        (HttpVersion.RECORDED, BOTH, BROWSER, HTTP11),
        (HttpVersion.RECORDED, frozenset(), BROWSER, None),
        (HttpVersion.CLIENT, H1_REC, BROWSER, None),
        (HttpVersion.CLIENT, H2_REC, HTTPX, None),
        (HttpVersion.HTTP1, H2_REC, BROWSER, HTTP11),
        (HttpVersion.HTTP1, H1_REC, (H2,), None),
        (HttpVersion.HTTP2, H1_REC, HTTPX, H2),
        (HttpVersion.HTTP2, frozenset(), (HTTP11,), HTTP11),
        (HttpVersion.HTTP2, H1_REC, (b"http/1.0",), b"http/1.0"),
        (HttpVersion.RECORDED, H2_REC, (), None),
    ],
)
def test_choose_alpn(
    option: HttpVersion, recorded: frozenset[str], offers: tuple[bytes, ...], expected: bytes | None
) -> None:
    """recorded: h2 only for an all-HTTP/2 host and a client offering it; client: mitmproxy's
    choice; 1.1 / 2: forced when offered; nothing wanted offered: mitmproxy's choice."""
    assert choose_alpn(option, recorded, offers) == expected


def test_mitmproxys_http2_option_off_never_chooses_h2() -> None:
    """With mitmproxy's http2 option off, even a forced 2 answers over HTTP/1.1."""
    assert choose_alpn(HttpVersion.HTTP2, H2_REC, BROWSER, http2=False) == HTTP11
    assert choose_alpn(HttpVersion.RECORDED, H2_REC, BROWSER, http2=False) == HTTP11


@given(
    st.sampled_from(list(HttpVersion)),
    st.sets(st.sampled_from(["HTTP/1.1", "HTTP/2.0", "HTTP/1.0", "HTTP/3"])),
    st.lists(st.sampled_from([H2, HTTP11, b"http/1.0", b"h3", b"spdy/3"]), unique=True),
    st.booleans(),
)
def test_the_choice_is_always_one_of_the_offers(
    option: HttpVersion, recorded: set[str], offers: list[bytes], http2: bool
) -> None:
    """Whatever the inputs, the choice is None or one of the client's offers (a handshake
    never fails for it), and never h2 with mitmproxy's http2 option off."""
    got = choose_alpn(option, frozenset(recorded), offers, http2=http2)
    assert got is None or got in offers
    assert not (got == H2 and not http2)


def test_versions_by_host_and_the_fallback_to_the_whole_cassette() -> None:
    """Versions are kept per host (case-insensitive); a host never recorded counts every
    interaction's, unless match_host (then it has none), as does a client without SNI."""
    by_host = versions_by_host(
        [
            _recorded("https://api.openai.com/v1/x", "HTTP/2.0"),
            _recorded("https://API.anthropic.com/v1/y", "HTTP/1.1"),
            no_response(),
        ]
    )
    assert recorded_versions(by_host, "api.openai.com", match_host=False) == H2_REC
    assert recorded_versions(by_host, "api.anthropic.com", match_host=True) == H1_REC
    assert recorded_versions(by_host, "other.example", match_host=False) == BOTH
    assert recorded_versions(by_host, "other.example", match_host=True) == frozenset()
    assert recorded_versions(by_host, None, match_host=True) == BOTH


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("recorded", HttpVersion.RECORDED),
        ("client", HttpVersion.CLIENT),
        ("1.1", HttpVersion.HTTP1),
        ("2", HttpVersion.HTTP2),
        (" 2.0 ", HttpVersion.HTTP2),
        ("H2", HttpVersion.HTTP2),
        (HttpVersion.HTTP1, HttpVersion.HTTP1),
    ],
)
def test_parse_http_version(value: object, expected: HttpVersion) -> None:
    """The option's four values, and the spellings of HTTP/2 and 1.1 people write."""
    assert parse_http_version(value) is expected


def test_a_bad_http_version_names_the_option_and_the_values() -> None:
    """One line naming the option as set and the values it takes."""
    with pytest.raises(UsageError) as e:
        settings_from({"http_version": "3"})
    assert str(e.value) == (
        "option 'http_version': unknown HTTP version '3' (one of: recorded, client, 1.1, 2)"
    )


def test_settings_default_to_recorded() -> None:
    """Without the option the settings say recorded."""
    assert settings_from({}).http_version is HttpVersion.RECORDED
    assert settings_from({"http_version": "client"}).http_version is HttpVersion.CLIENT
