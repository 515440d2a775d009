"""Miss explanations never print a secret (core/matching/explanation.py, core/redaction/shown.py):
values of members and query parameters named like secrets, and of the redacted body fields."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.cassette.model import Request
from replayproxy._core.matching.matcher import Matcher, Miss
from replayproxy._core.redaction.secrets import is_secret_name
from replayproxy._core.redaction.shown import hidden_at, mask_json_text
from replayproxy.testing._builders import interaction

SECRET = "sk-live-SECRET-4242"


def _miss(recorded: dict[str, object], requested: dict[str, object]) -> Miss:
    url = "https://api.example/v1/x"
    matcher = Matcher(
        [interaction(request=Request("POST", url, body=json.dumps(recorded).encode()))]
    )
    request = Request("POST", url, body=json.dumps(requested).encode())
    result = matcher.match(request)
    assert isinstance(result, Miss)
    return result


def _texts(miss: Miss) -> str:
    return "\n".join([miss.explain(), miss.one_line(), miss.short()])


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("api_key", True),
        ("apiKey", True),
        ("x-api-key", True),
        ("token", True),
        ("access_token", True),
        ("refreshToken", True),
        ("password", True),
        ("client_secret", True),
        ("authorization", True),
        ("key", True),
        ("max_tokens", False),
        ("prompt_tokens", False),
        ("model", False),
        ("author", False),
        ("messages", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    """Names with a secret's word are secrets; ``max_tokens`` and ``author`` are not."""
    assert is_secret_name(name) is secret


@pytest.mark.parametrize("name", ["api_key", "token", "password", "secret", "access_token"])
def test_a_differing_secret_member_is_not_printed(name: str) -> None:
    """The member differs: the explanation names its pointer, not its values."""
    miss = _miss({name: "recorded-" + SECRET, "model": "m"}, {name: SECRET, "model": "m"})
    text = _texts(miss)
    assert SECRET not in text
    assert f"body at /{name}: recorded <redacted>, requested <redacted>" in miss.explain()


def test_a_secret_inside_a_quoted_object_is_masked() -> None:
    """A member only the request has, whose object holds ``password``: that value is masked,
    the rest shown."""
    miss = _miss({"model": "m"}, {"model": "m", "login": {"user": "bob", "password": SECRET}})
    text = miss.explain()
    assert SECRET not in text
    assert '"user": "bob"' in text and '"password": "<redacted>"' in text


def test_a_secret_cut_short_is_still_masked() -> None:
    """A long value is cut to 80 characters in the explanation: the cut secret is masked."""
    padding = "x" * 60
    miss = _miss({"a": 1}, {"a": 1, "cfg": {"pad": padding, "token": SECRET * 3}})
    assert "sk-live" not in miss.explain()


def test_a_secret_query_parameter_is_not_printed() -> None:
    """``?token=...`` differs: its values are masked in the differences and the request line."""
    recorded = Request("POST", "https://api.example/v1/x?token=other&n=1", body=b'{"m":1}')
    matcher = Matcher([interaction(request=recorded)])
    found = matcher.match(Request("POST", f"https://api.example/v1/x?token={SECRET}&n=2"))
    assert isinstance(found, Miss)
    assert SECRET not in _texts(found)
    assert "token=<redacted>" in found.explain()


def test_the_redacted_body_fields_are_not_printed() -> None:
    """A field the session redacts (``hiding``) is masked at, under and above its pointer."""
    miss = _miss({"model": "m"}, {"model": "m", "user": {"ssn": SECRET}, "name": SECRET})
    assert SECRET in miss.explain()  # neither is named like a secret
    hidden = miss.hiding(["/user/ssn", "/name"])
    assert SECRET not in _texts(hidden)
    assert "body at /user: recorded (absent), requested <redacted>" in hidden.explain()


def test_other_values_are_still_shown() -> None:
    """Masking leaves what is not a secret as it was: the explanation still helps."""
    miss = _miss({"model": "gpt-a", "max_tokens": 5}, {"model": "gpt-b", "max_tokens": 6})
    text = miss.explain()
    assert '"gpt-a"' in text and '"gpt-b"' in text and "recorded 5, requested 6" in text


@pytest.mark.parametrize(
    ("tokens", "hidden", "expected"),
    [
        (("messages", "0", "content"), (), False),
        (("auth", "x"), (), True),
        (("user",), (("user", "ssn"),), True),
        (("user", "ssn", "x"), (("user", "ssn"),), True),
        (("items", "3", "card"), (("items", "*", "card"),), True),
        (("items", "3", "name"), (("items", "*", "card"),), False),
    ],
)
def test_hidden_at(
    tokens: tuple[str, ...], hidden: tuple[tuple[str, ...], ...], expected: bool
) -> None:
    """A pointer is hidden when named like a secret or on the path of a redacted pointer."""
    assert hidden_at(tokens, hidden) is expected


@given(st.text(max_size=200))
def test_mask_json_text_never_raises_and_keeps_plain_text(text: str) -> None:
    """Any text (JSON cut anywhere, or none): masking never raises; without a secret-named
    member the text is unchanged."""
    out = mask_json_text(text)
    if "token" not in text.lower() and not any(
        w in text.lower() for w in ("key", "secret", "pass", "auth", "cookie", "pwd", "bearer")
    ):
        assert out == text
    assert isinstance(out, str)


@given(
    st.dictionaries(st.sampled_from(["a", "b", "api_key", "token", "n"]), st.text(max_size=30)),
    st.integers(min_value=1, max_value=120),
)
def test_mask_json_text_hides_every_secret_value_of_a_cut_document(
    doc: dict[str, str], cut: int
) -> None:
    """A JSON object cut at any length: no secret-named member's value survives masking."""
    secret_doc = {k: (f"{SECRET}{k}" if is_secret_name(k) else v) for k, v in doc.items()}
    text = json.dumps(secret_doc, ensure_ascii=False)[:cut]
    assert "SECRET" not in mask_json_text(text)
