"""Redaction with a replacement of the user's (VCR.py's ``("authorization", "XXX")``): a header,
query parameter or JSON body field given as a ``(name, replacement)`` pair is stored with that
value instead of the marker; plain names still get the marker; nothing else changes."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.redaction.secrets import REDACTED, Redactor
from replayproxy.testing import request

SECRET_URL = "https://api.example.invalid/v1/chat?session=s3cret&token=t0ken&alt=sse"


def test_header_pair_stores_the_replacement_plain_name_the_marker() -> None:
    """x-team with ("x-team", "TEAM") gets TEAM, x-custom the marker, authorization (a
    default) the marker, content-type stays."""
    redactor = Redactor.with_extra(headers=["x-custom", ("X-Team", "TEAM")])
    headers = ((b"X-Team", b"t1"), (b"x-custom", b"c1"), (b"authorization", b"Bearer sk"))
    got = redactor.request(request(headers=(*headers, (b"content-type", b"a/b")))).headers
    assert got == (
        (b"X-Team", b"TEAM"),
        (b"x-custom", REDACTED),
        (b"authorization", REDACTED),
        (b"content-type", b"a/b"),
    )


def test_query_pair_is_url_encoded_and_the_rest_of_the_url_kept() -> None:
    """A replacement with a space and & is URL-encoded; the plain name gets the marker; alt
    stays as written."""
    redactor = Redactor.with_extra(query_params=["session", ("token", "A B&C")])
    url = redactor.request(request(url=SECRET_URL)).url
    assert url == "https://api.example.invalid/v1/chat?session=<redacted>&token=A+B%26C&alt=sse"


def test_body_pair_replaces_the_json_value() -> None:
    """/tenant with a replacement gets it, /user the marker, /model stays."""
    body = json.dumps({"model": "m", "user": "u1", "tenant": "t1"}).encode()
    redactor = Redactor.with_extra(body_fields=["/user", ("/tenant", "TENANT")])
    got = json.loads(redactor.request(request(body=body)).body)
    assert got == {"model": "m", "user": "<redacted>", "tenant": "TENANT"}


@given(st.text(min_size=1, max_size=20), st.binary(max_size=40))
def test_replacement_never_leaks_the_secret(replacement: str, secret: bytes) -> None:
    """Whatever the replacement, the stored header value is exactly it, never the secret."""
    redactor = Redactor.with_extra(headers=[("x-k", replacement)])
    (got,) = redactor.request(request(headers=((b"x-k", secret),))).headers
    assert got == (b"x-k", replacement.encode())
