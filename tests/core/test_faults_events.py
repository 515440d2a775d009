"""Where corrupt cuts an SSE event: the first ``data:`` value's span (core/faults/events.py)."""

from __future__ import annotations

import pytest

from replayproxy.core.faults.events import payload_span


@pytest.mark.parametrize(
    ("raw", "span"),
    [
        (b"data: abc\n\n", (6, 9)),
        (b"data:abc\n\n", (5, 8)),
        (b"data:  abc\n", (6, 10)),  # only one space after the colon belongs to the field
        (b"data: abc", (6, 9)),  # no line end: the value runs to the end
        (b"data:", (5, 5)),
        (b"event: x\ndata: ab\n\n", (15, 17)),
        (b"event: x\r\ndata: ab\r\n\r\n", (16, 18)),
        (b"event: x\rdata: ab\r\r", (15, 17)),
        (b"\ndata: x\n", (7, 8)),
        (b"\rdata: x\r", (7, 8)),
        (b"data: first\ndata: second\n\n", (6, 11)),
        (b"id: 1\r\ndata: x\ny\n", (13, 14)),
        (b"id: 1\n", None),
        (b"", None),
        (b"xdata: 1\n", None),
        (b"event: a\ndata\n\n", None),
        (b": data: 1\n\n", None),
    ],
)
def test_payload_span(raw: bytes, span: tuple[int, int] | None) -> None:
    """[start, end) of the first data: value; CR, LF and CRLF all end a line."""
    assert payload_span(raw) == span
