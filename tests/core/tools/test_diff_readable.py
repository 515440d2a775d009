"""``cassette diff`` stays readable on real cassettes: one difference per header that differs
(and none for the headers that do not), and a re-split stream named by where it parts: the
frame on each side and the body offset at which it ends there."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette, Frame, Interaction
from replayproxy._core.tools.diff import Timing, diff
from replayproxy._core.tools.edit import Edits, apply

SHIPPED = Path(__file__).resolve().parents[3] / "cassettes" / "openai-chat-text.cassette"
IGNORE = Timing(ignore=True)


def _shipped() -> tuple[Cassette, Interaction]:
    c = store.load(SHIPPED)
    return c, c.interactions[0]


def _with_headers(c: Cassette, request: tuple[tuple[bytes, bytes], ...] | None = None,
                  response: tuple[tuple[bytes, bytes], ...] | None = None) -> Cassette:  # fmt: skip
    (x,) = c.interactions
    assert x.response is not None
    rq = x.request if request is None else replace(x.request, headers=request)
    rs = x.response if response is None else replace(x.response, headers=response)
    return c.with_interactions((replace(x, request=rq, response=rs),))


def test_only_the_changed_headers_are_listed_one_each() -> None:
    """Of the 8 request and 18 response headers of a real recording, a changed value, an added
    and a removed header give exactly three differences, each naming its header."""
    a, x = _shipped()
    assert x.response is not None
    req = tuple((k, b"python-httpx/0.28.2") if k == b"User-Agent" else (k, v)
                for k, v in x.request.headers)  # fmt: skip
    resp = (*(h for h in x.response.headers if h[0] != b"cf-ray"), (b"x-new", b"1"))
    got = [(d.level, d.what, d.a, d.b) for d in diff(a, _with_headers(a, req, resp))]
    assert got == [
        ("interaction", "request header user-agent", "python-httpx/0.28.1", "python-httpx/0.28.2"),
        ("interaction", "response header cf-ray", "8f0c1d2e3a4b5c6d-AMS", ""),
        ("interaction", "response header x-new", "", "1"),
    ]


def test_repeated_headers_and_a_changed_order() -> None:
    """A repeated header's values are compared together; reordered headers with the same
    values are one ``header order`` difference listing the names on each side."""
    a, x = _shipped()
    h = x.request.headers
    twice = _with_headers(a, request=(*h, (b"accept", b"application/json")))
    (d,) = diff(a, twice)
    assert (d.what, d.a, d.b) == ("request header accept", "text/event-stream",
                                  "text/event-stream, application/json")  # fmt: skip
    swapped = _with_headers(a, request=(h[1], h[0], *h[2:]))
    (d,) = diff(a, swapped)
    names = [k.decode() for k, _ in h]
    assert d.what == "request header order or name case"
    assert d.a == ", ".join(names)
    assert d.b == ", ".join([names[1], names[0], *names[2:]])


def _ends(c: Cassette) -> list[int]:
    (x,) = c.interactions
    assert x.response is not None
    out, at = [], 0
    for f in x.response.frames:
        at += len(f.data)
        out.append(at)
    return out


def test_merged_frames_are_named_with_their_body_offsets() -> None:
    """Merging frames 3-4 and 10-12 of the real stream: with timing ignored, the splits line
    and one line per place, naming the frame on each side and where it ends in the body."""
    a, _ = _shipped()
    b = apply(apply(a, Edits(merge=((10, 12),))), Edits(merge=((3, 4),)))
    ea, eb = _ends(a), _ends(b)
    got = [(d.what, d.a, d.b) for d in diff(a, b, IGNORE)]
    assert got == [
        ("frame splits (same bytes)", f"{len(ea)} frames", f"{len(ea) - 3} frames"),
        ("frame 3 ends at body offset", str(ea[3]), str(eb[3])),
        ("frame 10 (B: frame 9) ends at body offset", str(ea[10]), str(eb[9])),
    ]
    assert eb[3] == ea[4] and eb[9] == ea[12]


def test_only_the_first_places_are_listed_and_the_rest_counted() -> None:
    """Seven places re-split: five are listed, then '... and 2 more re-split places'."""
    a, _ = _shipped()
    b = a
    for at in (36, 30, 24, 18, 12, 6, 0):  # merge frames at..at+1, from the end: indexes stay
        b = apply(b, Edits(merge=((at, at + 1),)))
    found = diff(a, b, IGNORE)
    assert [d.what for d in found[1:6]] == [
        "frame 0 ends at body offset",
        "frame 6 (B: frame 5) ends at body offset",
        "frame 12 (B: frame 10) ends at body offset",
        "frame 18 (B: frame 15) ends at body offset",
        "frame 24 (B: frame 20) ends at body offset",
    ]
    assert found[-1].what == "... and 2 more re-split places" and len(found) == 7


@given(st.sets(st.integers(1, 143), min_size=1, max_size=20))
def test_every_place_is_found_where_the_boundaries_part(cuts: set[int]) -> None:
    """Property: a stream re-cut at random body offsets reports a place exactly when its
    boundaries differ, and every listed offset is a boundary on its side."""
    a, x = _shipped()
    assert x.response is not None
    body = x.response.body
    points = sorted({len(body) * k // 144 for k in cuts} - {0, len(body)})
    pieces = [body[s:e] for s, e in zip([0, *points], [*points, len(body)], strict=True)]
    frames = tuple(Frame(0, p) for p in pieces)
    b = a.with_interactions((replace(x, response=replace(x.response, frames=frames)),))
    found = diff(a, b, IGNORE)
    ea, eb = _ends(a), _ends(b)
    if ea == eb:
        assert found == []
        return
    assert found[0].what == "frame splits (same bytes)"
    for d in found[1:]:
        if d.what.startswith("..."):
            continue
        assert int(d.a) in ea and int(d.b) in eb and d.a != d.b
