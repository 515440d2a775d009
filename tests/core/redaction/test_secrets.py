"""Redaction (pure): secrets replaced by a fixed marker, everything else kept byte for byte."""

from __future__ import annotations

from urllib.parse import quote

from hypothesis import assume, given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Ending, EndKind, Frame, Interaction, Request, Response
from replayproxy._core.redaction.secrets import (
    DEFAULT_HEADERS,
    NO_REDACTION,
    REDACTED,
    REDACTED_TEXT,
    Redactor,
    is_redacted,
    redact_headers,
    redact_url,
)

token = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.~%", min_size=1, max_size=12)
header_name = st.sampled_from(
    [b"Authorization", b"content-type", b"X-Api-Key", b"accept", b"Cookie", b"x-request-id"]
)
headers = st.lists(st.tuples(header_name, st.binary(max_size=20)), max_size=8)


def test_default_set_covers_provider_credentials() -> None:
    """The default header list names every credential header the issue lists."""
    expected = {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "x-amz-security-token",
        "ocp-apim-subscription-key",
        "x-auth-token",
        "cookie",
        "set-cookie",
    }
    assert expected == DEFAULT_HEADERS


def test_headers_keep_name_case_and_position() -> None:
    """Only the value of a listed header changes; its name (as sent) and position stay."""
    hs = ((b"Host", b"api"), (b"Authorization", b"Bearer sk"), (b"X-API-KEY", b"k"), (b"a", b"b"))
    assert redact_headers(hs, DEFAULT_HEADERS) == (
        (b"Host", b"api"),
        (b"Authorization", REDACTED),
        (b"X-API-KEY", REDACTED),
        (b"a", b"b"),
    )


@given(headers)
def test_header_redaction_properties(hs: list[tuple[bytes, bytes]]) -> None:
    """Same length and names; listed values become the marker; others are untouched."""
    out = redact_headers(hs, DEFAULT_HEADERS)
    assert len(out) == len(hs)
    for (name, value), (out_name, out_value) in zip(hs, out, strict=True):
        assert out_name == name
        assert out_value == (REDACTED if name.lower().decode() in DEFAULT_HEADERS else value)
    assert redact_headers(out, DEFAULT_HEADERS) == out  # idempotent


def test_url_key_parameter() -> None:
    """`key=` is redacted wherever it is in the query; the rest of the URL is unchanged."""
    url = "https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent"
    assert (
        redact_url(url + "?alt=sse&key=AIzaSECRET", frozenset({"key"}))
        == url + "?alt=sse&key=<redacted>"
    )
    assert redact_url(url + "?key=A&key=B#frag", frozenset({"key"})) == (
        url + "?key=<redacted>&key=<redacted>#frag"
    )
    assert redact_url(url + "?monkey=1&key", frozenset({"key"})) == url + "?monkey=1&key"
    assert redact_url(url + "?%6Bey=x", frozenset({"key"})) == url + "?%6Bey=<redacted>"
    assert redact_url(url, frozenset({"key"})) == url


@given(
    path=st.lists(token, max_size=3),
    fields=st.lists(st.tuples(token, st.text(max_size=10)), max_size=6),
    secret=st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=8, max_size=16),
)
def test_url_redaction_properties(
    path: list[str], fields: list[tuple[str, str]], secret: str
) -> None:
    """The secret disappears; every other field is kept exactly, in order."""
    query = [f"{name}={quote(value)}" for name, value in fields if name.lower() != "key"]
    assume(secret not in "&".join(query))
    position = len(query) // 2
    query.insert(position, f"key={secret}")
    url = "https://h.example/" + "/".join(path) + "?" + "&".join(query)
    out = redact_url(url, frozenset({"key"}))
    assert secret not in out.split("?", 1)[1]
    kept = out.split("?", 1)[1].split("&")
    expected = list(query)
    expected[position] = f"key={REDACTED_TEXT}"
    assert kept == expected
    assert out.split("?", 1)[0] == url.split("?", 1)[0]
    assert redact_url(out, frozenset({"key"})) == out


def test_redactor_with_extra_and_interaction() -> None:
    """Extra names add to the defaults; request and response heads are redacted, bodies not."""
    redactor = Redactor.with_extra(["X-Team-Token"], ["sig"])
    request = Request(
        "GET",
        "http://h/p?sig=abc&key=def&x=1",
        headers=((b"x-team-token", b"t"), (b"Cookie", b"c")),
        body=b"key=body-is-not-touched",
    )
    response = Response(200, headers=((b"Set-Cookie", b"s=1"), (b"x", b"y")))
    interaction = Interaction(request, response, Ending(EndKind.COMPLETE, 0))
    out = redactor.interaction(interaction)
    assert out.request.url == "http://h/p?sig=<redacted>&key=<redacted>&x=1"
    assert out.request.headers == ((b"x-team-token", REDACTED), (b"Cookie", REDACTED))
    assert out.request.body == request.body
    assert out.response is not None
    assert out.response.headers == ((b"Set-Cookie", REDACTED), (b"x", b"y"))
    assert NO_REDACTION.interaction(interaction) == interaction


def test_is_redacted() -> None:
    """The marker is recognised as bytes (headers) and text (query values)."""
    assert is_redacted(REDACTED) and is_redacted(REDACTED_TEXT)
    assert not is_redacted(b"Bearer sk") and not is_redacted("")


def test_query_names_are_compared_decoded_and_case_insensitively() -> None:
    """`KEY`, `api%5Fkey` and `api+key` spellings are matched; values may be empty; the rest of
    the URL (fragment included) is kept as written."""
    params = frozenset({"key", "api_key", "api key"})
    assert redact_url("/p?KEY=1&api%5Fkey=2&api+key=3&k=4", params) == (
        "/p?KEY=<redacted>&api%5Fkey=<redacted>&api+key=<redacted>&k=4"
    )
    assert redact_url("/p?key=&x=1#key=2", params) == "/p?key=<redacted>&x=1#key=2"
    assert redact_url("/p?", params) == "/p?"
    assert redact_url("/p?key=1", frozenset()) == "/p?key=1"
    assert redact_url("/p?a=1&&key=2", params) == "/p?a=1&&key=<redacted>"


def test_no_names_keeps_every_header() -> None:
    """An empty name set redacts nothing (and still returns a tuple)."""
    assert redact_headers([(b"Authorization", b"x")], frozenset()) == ((b"Authorization", b"x"),)


def test_with_extra_normalises_names_and_adds_to_the_defaults() -> None:
    """Extra names are stripped and lower-cased; blank ones are ignored."""
    r = Redactor.with_extra([" X-Team ", "  "], [" SIG ", ""], ["/user"])
    assert r.headers == DEFAULT_HEADERS | {"x-team"}
    assert r.query_params == frozenset({"key", "api_key", "access_token", "sig"})
    assert r.body_fields == ("/user",)
    assert Redactor.with_extra() == Redactor()


def test_log_urls_always_hide_the_default_credentials() -> None:
    """Redactor.url hides the default query credentials even with --no-redact."""
    assert NO_REDACTION.url("http://h/p?key=1&sig=2") == "http://h/p?key=<redacted>&sig=2"
    sig = Redactor.with_extra(query_params=["sig"])
    assert sig.url("http://h/p?key=1&sig=2") == "http://h/p?key=<redacted>&sig=<redacted>"


def test_body_fields_are_redacted_in_request_and_response() -> None:
    """body_fields pointers redact the request body and every response frame's JSON."""
    r = Redactor(body_fields=("/user",))
    request = Request("POST", "http://h/p", body=b'{"user": "ann", "n": 1}')
    response = Response(200, frames=(Frame(5, b'data: {"user": "bob"}\n\n'),))
    out = r.interaction(Interaction(request, response, Ending(EndKind.COMPLETE, 0)))
    assert out.request.body == b'{"user":"<redacted>","n":1}'
    assert out.response is not None
    assert out.response.frames == (Frame(5, b'data: {"user":"<redacted>"}\n\n'),)
    none = Interaction(request, None, Ending(EndKind.NO_RESPONSE, 0))
    assert r.interaction(none).response is None


def test_url_edges_are_kept_exactly() -> None:
    """The first ? starts the query and the first # after it ends it; a value may hold = or ?."""
    params = frozenset({"key"})
    assert redact_url("/p?key=a=b&x=1", params) == "/p?key=<redacted>&x=1"
    assert redact_url("/p?key=1?x=2", params) == "/p?key=<redacted>"
    assert redact_url("?key=1", params) == "?key=<redacted>"
    assert redact_url("key=secret", params) == "key=secret"
    assert redact_url("/p#frag?key=1", params) == "/p#frag?key=<redacted>"
    assert redact_url("/p?key=1#a#b", params) == "/p?key=<redacted>#a#b"
