"""JSON body fields redacted by pointer (core/redaction/body_fields.py): exact documents, bodies,
frames."""

from __future__ import annotations

from typing import Any

import pytest

from replayproxy._core.cassette.model import Frame
from replayproxy._core.redaction.body_fields import (
    parse_pointers,
    redact_body,
    redact_frames,
    redact_json,
)

R = "<redacted>"


@pytest.mark.parametrize(
    ("doc", "pointer", "expected", "hit"),
    [
        ({"a": 1}, ("a",), {"a": R}, True),
        ({"a": 1}, ("b",), {"a": 1}, False),
        ({"a": 1}, (), {"a": 1}, False),
        ({"a": {"b": 1, "c": 2}}, ("a", "b"), {"a": {"b": R, "c": 2}}, True),
        ({"a": {"b": 1}}, ("a", "c"), {"a": {"b": 1}}, False),
        (
            {"m": [{"n": 1}, {"n": 2}, {"x": 3}]},
            ("m", "*", "n"),
            {"m": [{"n": R}, {"n": R}, {"x": 3}]},
            True,
        ),
        ({"a": 1, "b": [2]}, ("*",), {"a": R, "b": R}, True),
        ({"*": 1, "b": 2}, ("*",), {"*": R, "b": R}, True),
        ([1, 2, 3], ("1",), [1, R, 3], True),
        ([1, 2, 3], ("0",), [R, 2, 3], True),
        ([1, 2, 3], ("2",), [1, 2, R], True),
        ([1, 2, 3], ("3",), [1, 2, 3], False),
        ([1, 2, 3], ("*",), [R, R, R], True),
        ([1, 2, 3], ("-",), [1, 2, 3], False),
        ([1, 2, 3], ("\u0661",), [1, 2, 3], False),  # ARABIC-INDIC DIGIT ONE is not an index
        ([1, 2, 3], ("a",), [1, 2, 3], False),
        ([{"k": 1}, {"j": 2}], ("*", "k"), [{"k": R}, {"j": 2}], True),
        ({"a": [1, 2]}, ("a", "0", "x"), {"a": [1, 2]}, False),
        (5, ("a",), 5, False),
        ("s", ("0",), "s", False),
        (None, ("a",), None, False),
    ],
)
def test_redact_json(doc: Any, pointer: tuple[str, ...], expected: Any, hit: bool) -> None:
    """The value(s) at the pointer become "<redacted>"; a miss changes nothing."""
    got, got_hit = redact_json(doc, pointer)
    assert (got, got_hit) == (expected, hit)
    if not hit:
        assert got is doc


def test_redact_json_copies_along_the_path() -> None:
    """The input document is never modified."""
    doc = {"a": {"b": 1}, "c": [1, {"d": 2}]}
    redact_json(doc, ("a", "b"))
    redact_json(doc, ("c", "1", "d"))
    assert doc == {"a": {"b": 1}, "c": [1, {"d": 2}]}


@pytest.mark.parametrize(
    ("pointers", "parsed"),
    [
        (["/a/b~1c"], (("a", "b/c"),)),
        (["/x~0y", "/"], (("x~y",), ("",))),
        ([], ()),
    ],
)
def test_parse_pointers(pointers: list[str], parsed: tuple[tuple[str, ...], ...]) -> None:
    """RFC 6901 pointers split into unescaped tokens."""
    assert parse_pointers(pointers) == parsed


@pytest.mark.parametrize("bad", ["a/b", "", "#/a"])
def test_a_pointer_must_start_with_a_slash(bad: str) -> None:
    """Anything else is a one-line ValueError naming it."""
    with pytest.raises(ValueError) as caught:
        parse_pointers(["/ok", bad])
    assert str(caught.value) == f"JSON pointer must start with '/': {bad!r}"


@pytest.mark.parametrize(
    ("body", "pointers", "expected"),
    [
        (b'  {"a": "s", "b": "\xc3\xa9"}', [("a",)], b'{"a":"<redacted>","b":"\xc3\xa9"}'),
        (b'[{"a": 1}]', [("0", "a")], b'[{"a":"<redacted>"}]'),
        (b'{"a": 1, "b": 2}', [("a",), ("b",)], b'{"a":"<redacted>","b":"<redacted>"}'),
        (b'{"a": 1, "b": 2}', [("x",), ("b",)], b'{"a":1,"b":"<redacted>"}'),
        (b'{"a": 1, "b": 2}', [("b",), ("x",)], b'{"a":1,"b":"<redacted>"}'),
        (b'{"b": 1}', [("a",)], b'{"b": 1}'),
        (b'{"b": 1}', [], b'{"b": 1}'),
        (b"not json", [("a",)], b"not json"),
        (b"", [("a",)], b""),
        (b"   ", [("a",)], b"   "),
        (b'"a"', [("a",)], b'"a"'),
        (b"{bad", [("a",)], b"{bad"),
        (b'{"a": "\xff"}', [("a",)], b'{"a": "\xff"}'),
    ],
)
def test_redact_body(body: bytes, pointers: list[tuple[str, ...]], expected: bytes) -> None:
    """A JSON body with a field to redact is re-encoded compactly; anything else is kept."""
    assert redact_body(body, pointers) == expected


@pytest.mark.parametrize(
    ("frames", "expected"),
    [
        # The value grows by 4 and 8 bytes; a boundary inside a value keeps its distance into it.
        (
            [b'data: {"k":"secret"}\n', b'\ndata: {"k":"x', b'y"}\n\n'],
            [b'data: {"k":"<redacted>"}\n', b'\ndata: {"k":"<', b'redacted>"}\n\n'],
        ),
        # A boundary after two redacted values moves by both changes.
        (
            [b'data: {"k":1}\n\ndata: {"k":22}\n\n', b'data: {"k":3}\n\n'],
            [
                b'data: {"k":"<redacted>"}\n\ndata: {"k":"<redacted>"}\n\n',
                b'data: {"k":"<redacted>"}\n\n',
            ],
        ),
        # A boundary right after the value moves with it.
        ([b'data: {"k":"ab"}', b"\n\n"], [b'data: {"k":"<redacted>"}', b"\n\n"]),
        # The value shrinks: a boundary past the new value's end goes to its end.
        (
            [b'data: {"k":"abcdefghijklmnopqrstuvwxyz0123"', b"}\r\n\r\n"],
            [b'data: {"k":"<redacted>"}', b"\r\n\r\n"],
        ),
        # No space after the colon; only the first space belongs to the field.
        (
            [b'data:{"k":1}\n\ndata:  {"k":2}\n\n'],
            [b'data:{"k":"<redacted>"}\n\ndata: {"k":"<redacted>"}\n\n'],
        ),
        # Lines that are not data, or not JSON with the field, are kept byte for byte.
        (
            [b'event: e\ndata: {"j": 1}\n\n', b": c\ndata: [DONE]\n\n", b'data: {"k": 3}\n\n'],
            [
                b'event: e\ndata: {"j": 1}\n\n',
                b": c\ndata: [DONE]\n\n",
                b'data: {"k":"<redacted>"}\n\n',
            ],
        ),
        # A whole JSON response body (a token endpoint) split in frames.
        (
            [b'{"k": "abc', b'def", "x": 1}'],
            [b'{"k":"<red', b'acted>","x":1}'],
        ),
    ],
)
def test_redact_frames(frames: list[bytes], expected: list[bytes]) -> None:
    """Frames keep their count and offsets; boundaries move with the bytes before them."""
    got = redact_frames([Frame(10 * i, d) for i, d in enumerate(frames)], [("k",), ("zz",)])
    assert got == tuple(Frame(10 * i, d) for i, d in enumerate(expected))


def test_redact_frames_with_nothing_to_do() -> None:
    """No pointers, no frames, or nothing matching: the frames come back as they are."""
    frames = (Frame(0, b'data: {"j": 1}\n\n'),)
    assert redact_frames(frames, []) == frames
    assert redact_frames(frames, [("k",)]) == frames
    assert redact_frames([], [("k",)]) == ()
