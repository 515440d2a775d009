"""core/faults/bytes.py exactly: where each ``split`` mode cuts, and when the pieces go out.
(The mutation sample found every mode's arithmetic untested by exact values: a range that
came back empty, a cut after a body's last byte, a midpoint off by a third, a first piece
timed as a continuation.)"""

from __future__ import annotations

import random

from replayproxy._core.faults.bytes import split, split_count, split_points
from replayproxy._core.schedule.model import Finish, FinishKind, Head, Schedule, Write

RNG = random.Random(0)


def test_split_every_k_bytes_cuts_at_each_multiple_inside_the_body() -> None:
    """bytes=3 on 10 bytes: cuts at 3, 6 and 9 (never at 0 or at the end)."""
    assert split_points(b"0123456789", None, 3, 16, RNG) == [3, 6, 9]
    assert split_points(b"012345", None, 3, 16, RNG) == [3]
    assert split_count(b"0123456789", None, 3, 16) == 3


def test_split_utf8_cuts_after_each_lead_byte_but_never_at_the_end() -> None:
    """After the lead byte of 'é' (C3 A9) and of '€' (E2 82 AC); a lead byte that ends the
    body gives no cut (it would be an empty piece)."""
    body = "aé€".encode()  # 61 | C3 A9 | E2 82 AC
    assert split_points(body, "utf8", None, 16, RNG) == [2, 4]
    assert split_points(b"a\xc3", "utf8", None, 16, RNG) == []


def test_split_midline_cuts_each_data_line_in_its_middle() -> None:
    """'data: abcdef' is 12 bytes long: cut 6 bytes in; the next line's likewise."""
    body = b"data: abcdef\n\ndata: xy\n\n"
    assert split_points(body, "midline", None, 16, RNG) == [6, 14 + 4]


def test_split_crlf_cuts_between_cr_and_lf() -> None:
    assert split_points(b"data: 1\r\n\r\n", "crlf", None, 16, RNG) == [8, 10]


def test_split_pieces_of_one_write_go_gap_apart_and_each_write_keeps_its_time() -> None:
    """The first piece of each recorded write keeps the write's time; the following pieces
    come ``gap`` after the one before; the finish moves after the last piece if needed."""
    head = Head(100, 200, "", ())
    schedule = Schedule(
        head, (Write(1_000, b"abcd"), Write(50_000, b"efgh")), Finish(50_500, FinishKind.COMPLETE)
    )
    out = split(schedule, [2, 6], gap=0.000_01)  # 10,000 ns
    assert [(w.at_ns, w.data) for w in out.writes] == [
        (1_000, b"ab"),
        (11_000, b"cd"),
        (50_000, b"ef"),
        (60_000, b"gh"),
    ]
    assert out.finish == Finish(60_000, FinishKind.COMPLETE)
    assert out.head == head
