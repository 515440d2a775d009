"""``cassette edit --redact-json`` takes a JSON pointer like every other option; the old dotted
path still works, with one warning line on stderr naming the pointer to use."""

from __future__ import annotations

from pathlib import Path

import pytest

from replayproxy import _store as store
from tests.cassette.test_cli import ROOT, rp

SHIPPED = ROOT / "cassettes" / "openai-chat-text.cassette"
REDACTED = (
    b'{"model":"gpt-4.1-nano","messages":[{"role":"user","content":"<redacted>"}],'
    b'"stream":true,"stream_options":{"include_usage":true}}'
)


def _body(path: Path) -> bytes:
    return store.load(path).interactions[0].request.body


def test_a_pointer_redacts_that_field_silently(tmp_path: Path) -> None:
    """/messages/0/content (the pointer --ignore-body-field takes) redacts the prompt of the
    shipped recording; nothing on stderr."""
    out = tmp_path / "out.cassette"
    code, _, err = rp("cassette", "edit", str(SHIPPED), "-o", str(out),
                      "--redact-json", "/messages/0/content")  # fmt: skip
    assert (code, err) == (0, "")
    assert _body(out) == REDACTED


@pytest.mark.parametrize(
    ("dotted", "pointer"),
    [("messages.0.content", "/messages/0/content"), ("messages.*.content", "/messages/*/content")],
)
def test_a_dotted_path_still_works_with_one_warning(
    tmp_path: Path, dotted: str, pointer: str
) -> None:
    """The deprecated dotted form gives the same cassette and one stderr line naming the
    pointer to use."""
    out = tmp_path / "out.cassette"
    code, _, err = rp("cassette", "edit", str(SHIPPED), "-o", str(out), "--redact-json", dotted)
    assert code == 0
    assert err.splitlines() == [
        f"warning: --redact-json {dotted}: dotted paths are deprecated; "
        f"use the JSON pointer {pointer}"
    ]
    assert _body(out) == REDACTED


def test_a_key_with_a_slash_becomes_an_escaped_pointer(tmp_path: Path) -> None:
    """A dotted segment holding '/' or '~' is escaped in the suggested pointer (RFC 6901)."""
    code, _, err = rp("cassette", "edit", str(SHIPPED), "-o", str(tmp_path / "o.cassette"),
                      "--redact-json", "a/b.~")  # fmt: skip
    assert code == 2
    assert err.splitlines()[0] == (
        "warning: --redact-json a/b.~: dotted paths are deprecated; use the JSON pointer /a~1b/~0"
    )
    assert "--redact-json /a~1b/~0: no selected request body has that field" in err


def test_a_pointer_naming_nothing_is_one_error_line(tmp_path: Path) -> None:
    """A pointer that names no field: exit 2, one line naming it, nothing written."""
    out = tmp_path / "out.cassette"
    code, _, err = rp("cassette", "edit", str(SHIPPED), "-o", str(out),
                      "--redact-json", "/messages/1/content")  # fmt: skip
    assert code == 2 and not out.exists()
    assert "--redact-json /messages/1/content: no selected request body has that field" in err
