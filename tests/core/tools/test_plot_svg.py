"""The SVG timeline's facts, exactly: the axis and its ticks, one mark per frame where its time
and size put it, the lane labels (escaped, truncated), the end marks and the legend."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from replayproxy._core.cassette.model import (
    Cassette,
    Ending,
    EndKind,
    Frame,
    Interaction,
    Request,
    Response,
)
from replayproxy._core.cassette.websocket import WebSocketSession, WsClose, WsCloseKind, WsMessage
from replayproxy._core.tools.plot import _fmt_bytes, _fmt_tick, _nice_step, plot
from replayproxy.testing import MS
from tests.cassette.samples import demo_cassette

SVG = "{http://www.w3.org/2000/svg}"
GOLDEN = Path(__file__).parent / "data" / "plot-demo.svg"

# The picture's geometry: lanes start at y=56 and are 64 px tall; the plot area runs from
# x=270 to x=940 (980 wide, 40 on the right); a lane's time line is 50 px below its top.
LEFT, RIGHT, TOP, LANE = 270, 940, 56, 64


def _stream(
    path: str,
    head_ms: float | None,
    frames: list[tuple[float, int]],
    end: EndKind,
    end_ms: float,
    faults: tuple[str, ...] = (),
) -> Interaction:
    response = (
        None
        if head_ms is None
        else Response(
            200,
            "OK",
            head_offset_ns=round(head_ms * MS),
            frames=tuple(Frame(round(t * MS), b"x" * n) for t, n in frames),
        )
    )
    return Interaction(
        Request("POST", f"https://api.example.test{path}"),
        response,
        Ending(end, round(end_ms * MS)),
        faults,
    )


def _root(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def _texts(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter(f"{SVG}text")]


def _x(ms: float, axis_ms: float) -> float:
    return LEFT + ms / axis_ms * (RIGHT - LEFT)


@pytest.mark.parametrize(
    ("span_ms", "step"),
    [
        (60, 10),
        (8, 1),
        (9, 2),
        (16, 2),
        (17, 5),
        (40, 5),
        (41, 10),
        (80, 10),
        (3200, 500),
        (12_000, 2000),
        (0.000001, 1e-6),
        (0, 1e-6),
    ],
)
def test_tick_step_is_1_2_or_5_times_a_power_of_ten(span_ms: float, step: float) -> None:
    """About 8 ticks over the span, at the smallest round step that is at least span/8."""
    assert _nice_step(span_ms) == pytest.approx(step, rel=1e-9)


def test_tick_step_target_is_a_parameter() -> None:
    """The target count of ticks is honoured."""
    assert _nice_step(100, target=4) == 50
    assert _nice_step(100, target=10) == 10


@pytest.mark.parametrize(
    ("ms", "step", "text"),
    [
        (0, 10, "0 ms"),
        (250, 50, "250 ms"),
        (0.5, 0.1, "0.5 ms"),
        (999, 999, "999 ms"),
        (2000, 1000, "2 s"),
        (2500, 500, "2500 ms"),
        (0, 1000, "0 s"),
        (1500, 1500, "1.5 s"),
    ],
)
def test_tick_labels_use_one_unit(ms: float, step: float, text: str) -> None:
    """Ticks are in ms, or in s once they are whole seconds apart."""
    assert _fmt_tick(ms, step) == text


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 B"),
        (9_999, "9999 B"),
        (10_000, "9.8 KiB"),
        (9_999_999, "9765.6 KiB"),
        (10_000_000, "9.5 MiB"),
        (3 * 1024 * 1024 * 1024, "3072.0 MiB"),
    ],
)
def test_byte_sizes(n: int, text: str) -> None:
    """Sizes are bytes below 10,000, KiB below 10 million, MiB above."""
    assert _fmt_bytes(n) == text


def _cassette() -> Cassette:
    return Cassette(
        (
            _stream("/v1/chat", 10, [(20, 100), (40, 25)], EndKind.COMPLETE, 50),
            _stream("/v1/refused", None, [], EndKind.NO_RESPONSE, 30),
            _stream("/v1/hang", 5, [(15, 1)], EndKind.HANG, 60, ("stall:for=1",)),
        )
    )


def test_axis_ticks_are_round_and_span_the_plot() -> None:
    """The axis runs from 0 to the last event rounded up to a tick, ticks evenly placed."""
    root = _root(plot(_cassette()))
    ticks = [t for t in root.iter(f"{SVG}text") if t.get("text-anchor") == "middle"]
    assert [t.text for t in ticks] == [f"{n} ms" for n in range(0, 70, 10)]
    xs = [float(t.get("x", "")) for t in ticks]
    assert xs == [round(_x(n, 60), 1) for n in range(0, 70, 10)]
    axis_y = TOP + 3 * LANE + 6
    assert {t.get("y") for t in ticks} == {str(axis_y + 16)}
    grid = [ln for ln in root.iter(f"{SVG}line") if ln.get("stroke") == "#e2e8f0"]
    assert [(g.get("x1"), g.get("y1"), g.get("y2")) for g in grid] == [
        (f"{x:.1f}", str(TOP - 6), str(axis_y)) for x in xs
    ]
    axis = [ln for ln in root.iter(f"{SVG}line") if ln.get("stroke") == "#64748b"]
    assert [(a.get("x1"), a.get("x2"), a.get("y1"), a.get("y2")) for a in axis] == [
        (str(LEFT), str(RIGHT), str(axis_y), str(axis_y))
    ]


def test_the_axis_rounds_up_to_a_whole_tick() -> None:
    """A span of 61 ms gets an axis to 70 ms in 10 ms steps; 12 s gets seconds."""
    c = Cassette((_stream("/a", 1, [], EndKind.COMPLETE, 61),))
    ticks = [t.text for t in _root(plot(c)).iter(f"{SVG}text") if t.get("text-anchor")]
    assert ticks == [f"{n} ms" for n in range(0, 80, 10)]
    c = Cassette((_stream("/a", 1, [], EndKind.COMPLETE, 12_000),))
    ticks = [t.text for t in _root(plot(c)).iter(f"{SVG}text") if t.get("text-anchor")]
    assert ticks == [f"{n} s" for n in range(0, 14, 2)]


def _frame_bars(root: ET.Element) -> list[ET.Element]:
    return [
        r for r in root.iter(f"{SVG}rect") if r.get("fill") == "#2f6fdf" and r.get("fill-opacity")
    ]


def test_one_bar_per_frame_at_its_time_with_its_size() -> None:
    """Each frame is one bar on its lane's time line, at its time, sqrt-scaled height."""
    root = _root(plot(_cassette()))
    bars = _frame_bars(root)
    titles = [b.find(f"{SVG}title") for b in bars]
    assert [t.text for t in titles if t is not None] == [
        "frame 0: +20 ms, 100 B",
        "frame 1: +40 ms, 25 B",
        "frame 0: +15 ms, 1 B",
    ]
    expected = []
    for lane, t_ms, size in [(0, 20, 100), (0, 40, 25), (2, 15, 1)]:
        base = TOP + lane * LANE + 50
        h = 2 + 38 * math.sqrt(size / 100)
        expected.append((f"{_x(t_ms, 60) - 1.25:.1f}", f"{base - h:.1f}", "2.5", f"{h:.1f}", "0.8"))
    assert [
        (b.get("x"), b.get("y"), b.get("width"), b.get("height"), b.get("fill-opacity"))
        for b in bars
    ] == expected


def test_frames_without_bytes_are_still_marked() -> None:
    """Empty frames (max size 0) get a 2 px bar, not a division by zero."""
    c = Cassette((_stream("/a", 1, [(2, 0), (3, 0)], EndKind.COMPLETE, 4),))
    assert [b.get("height") for b in _frame_bars(_root(plot(c)))] == ["2.0", "2.0"]


def test_lane_labels_details_and_faults() -> None:
    """Each lane: '#I METHOD PATH', then status, frames, size and end; faults when given."""
    lane_texts = [t for t in _root(plot(_cassette())).iter(f"{SVG}text") if t.get("x") == "12"]
    assert [t.text for t in lane_texts[1:]] == [
        "#0 POST /v1/chat",
        "200 · 2 frames · 125 B · complete",
        "#1 POST /v1/refused",
        "no response · 0 frames · 0 B · no_response",
        "#2 POST /v1/hang",
        "200 · 1 frame · 1 B · hang",
        "faults: stall:for=1",
    ]
    root = _root(plot(_cassette()))
    label_ys = [t.get("y") for t in root.iter(f"{SVG}text") if (t.text or "").startswith("#")]
    assert label_ys == [f"{TOP + n * LANE + 21:.1f}" for n in range(3)]
    faults = [t for t in root.iter(f"{SVG}text") if (t.text or "").startswith("faults:")]
    assert [(f.get("y"), f.get("fill")) for f in faults] == [
        (f"{TOP + 2 * LANE + 52:.1f}", "#dc2626")
    ]


def test_labels_are_escaped_and_truncated() -> None:
    """Markup in a path or fault is text, not SVG; long labels end in an ellipsis."""
    c = Cassette(
        (
            _stream("/a<b>&'\"c", 1, [], EndKind.COMPLETE, 2, ("x" * 50,)),
            _stream("/" + "p" * 40, 1, [], EndKind.COMPLETE, 2),
            _stream("/" + "q" * 22, 1, [], EndKind.COMPLETE, 2),
        ),
    )
    svg = plot(c, title="<mine> & 'yours'")
    assert "<b>" not in svg and "&lt;b&gt;&amp;&#x27;&quot;c" in svg
    texts = _texts(_root(svg))
    assert texts[0] == "<mine> & 'yours'"
    labels = [t for t in texts if t.startswith("#")]
    assert labels == ["#0 POST /a<b>&'\"c", "#1 POST /" + "p" * 21 + "…", "#2 POST /" + "q" * 22]
    assert [t for t in texts if t.startswith("faults")] == ["faults: " + "x" * 40]


def test_end_marks() -> None:
    """A dot for a clean end, a cross for a reset or no response, a dashed line to the right
    edge and an arrow for a hang, a bar for any other early end; each at the end time."""
    c = Cassette(
        (
            _stream("/a", 1, [], EndKind.COMPLETE, 10),
            _stream("/b", 1, [], EndKind.RESET, 20),
            _stream("/c", None, [], EndKind.NO_RESPONSE, 30),
            _stream("/d", 1, [], EndKind.HANG, 40),
            _stream("/e", 1, [], EndKind.INCOMPLETE, 50),
            _stream("/f", 1, [], EndKind.CLIENT_GONE, 60),
        )
    )
    root = _root(plot(c))
    base = [TOP + n * LANE + 50 for n in range(6)]
    dots = list(root.iter(f"{SVG}circle"))[:-1]  # the last one is the legend's
    assert [(d.get("cx"), d.get("cy"), d.get("r"), d.get("fill")) for d in dots] == [
        (f"{_x(10, 60):.1f}", f"{base[0]:.1f}", "5", "#16a34a")
    ]
    crosses = [p for p in root.iter(f"{SVG}path") if p.find(f"{SVG}title") is not None]
    marks = [(p.get("d"), p.findtext(f"{SVG}title")) for p in crosses]
    x1, x2 = _x(20, 60), _x(30, 60)
    assert marks[:2] == [
        (
            f"M{x1 - 5:.1f},{base[1] - 5:.1f} L{x1 + 5:.1f},{base[1] + 5:.1f} "
            f"M{x1 - 5:.1f},{base[1] + 5:.1f} L{x1 + 5:.1f},{base[1] - 5:.1f}",
            "reset",
        ),
        (
            f"M{x2 - 5:.1f},{base[2] - 5:.1f} L{x2 + 5:.1f},{base[2] + 5:.1f} "
            f"M{x2 - 5:.1f},{base[2] + 5:.1f} L{x2 + 5:.1f},{base[2] - 5:.1f}",
            "no_response",
        ),
    ]
    assert marks[2] == (
        f"M{RIGHT - 7:.1f},{base[3] - 5:.1f} L{RIGHT:.1f},{base[3]:.1f} "
        f"L{RIGHT - 7:.1f},{base[3] + 5:.1f}",
        "hang",
    )
    dashed = next(ln for ln in root.iter(f"{SVG}line") if ln.get("stroke-dasharray"))
    assert (dashed.get("x1"), dashed.get("x2"), dashed.get("y1"), dashed.get("y2")) == (
        f"{_x(40, 60):.1f}",
        f"{RIGHT:.1f}",
        f"{base[3]:.1f}",
        f"{base[3]:.1f}",
    )
    bars = [
        r
        for r in root.iter(f"{SVG}rect")
        if r.findtext(f"{SVG}title") in ("incomplete", "client_gone")
    ]
    assert [(r.get("x"), r.get("y"), r.findtext(f"{SVG}title")) for r in bars] == [
        (f"{_x(50, 60) - 1.5:.1f}", f"{base[4] - 8:.1f}", "incomplete"),
        (f"{_x(60, 60) - 1.5:.1f}", f"{base[5] - 8:.1f}", "client_gone"),
    ]


def test_waiting_line_and_head_tick() -> None:
    """Grey from the request to the head (or to the end when no head came), a dark tick at the
    head, and a thin line from the head to the last thing that happened."""
    root = _root(plot(_cassette()))
    waits = [ln for ln in root.iter(f"{SVG}line") if ln.get("stroke") == "#cbd5e1"][:-1]
    base = [TOP + n * LANE + 50 for n in range(3)]
    assert [(w.get("x1"), w.get("x2"), w.get("y1")) for w in waits] == [
        (str(LEFT), f"{_x(10, 60):.1f}", f"{base[0]:.1f}"),
        (str(LEFT), f"{_x(30, 60):.1f}", f"{base[1]:.1f}"),
        (str(LEFT), f"{_x(5, 60):.1f}", f"{base[2]:.1f}"),
    ]
    heads = [
        r for r in root.iter(f"{SVG}rect") if (r.findtext(f"{SVG}title") or "").startswith("head")
    ]
    assert [(r.get("x"), r.get("y"), r.findtext(f"{SVG}title")) for r in heads] == [
        (f"{_x(10, 60) - 1.5:.1f}", f"{base[0] - 14:.1f}", "head +10 ms"),
        (f"{_x(5, 60) - 1.5:.1f}", f"{base[2] - 14:.1f}", "head +5 ms"),
    ]
    lines = [
        ln for ln in root.iter(f"{SVG}line")
        if ln.get("stroke") == "#1f2937" and ln.get("stroke-width") == "1"
    ]  # fmt: skip
    assert [(ln.get("x1"), ln.get("x2")) for ln in lines] == [
        (f"{_x(10, 60):.1f}", f"{_x(50, 60):.1f}"),
        (f"{_x(5, 60):.1f}", f"{_x(60, 60):.1f}"),
    ]


def test_negative_times_are_drawn_at_zero() -> None:
    """A hand-edited negative offset is drawn at the start of the axis, not off the picture."""
    c = Cassette((_stream("/a", -5, [(-3, 4)], EndKind.RESET, -1),))
    root = _root(plot(c))
    assert [b.get("x") for b in _frame_bars(root)] == [f"{LEFT - 1.25:.1f}"]
    (tick,) = [r for r in root.iter(f"{SVG}rect") if r.findtext(f"{SVG}title") == "head +0 ms"]
    assert tick.get("x") == f"{LEFT - 1.5:.1f}"
    cross = next(p for p in root.iter(f"{SVG}path") if p.findtext(f"{SVG}title") == "reset")
    assert (cross.get("d") or "").startswith(f"M{LEFT - 5:.1f},")


def test_lanes_size_and_stripes() -> None:
    """The picture is 56 + 64 per lane + 78 px tall; every second lane is striped."""
    root = _root(plot(_cassette()))
    height = TOP + 3 * LANE + 78
    assert (root.get("width"), root.get("height"), root.get("viewBox")) == (
        "980",
        str(height),
        f"0 0 980 {height}",
    )
    stripes = [r for r in root.iter(f"{SVG}rect") if r.get("fill") == "#f6f8fb"]
    assert [(s.get("y"), s.get("height"), s.get("width")) for s in stripes] == [
        (str(TOP + LANE), str(LANE), "980")
    ]
    texts = _texts(root)
    assert texts[0] == "replayproxy cassette timeline"


def test_no_interactions() -> None:
    """An empty choice still draws the axis, one empty lane's room and a note."""
    root = _root(plot(Cassette(()), title="empty"))
    assert root.get("height") == str(TOP + LANE + 78)
    texts = _texts(root)
    assert texts[0] == "empty" and "(no interactions)" in texts
    note = next(t for t in root.iter(f"{SVG}text") if t.text == "(no interactions)")
    assert (note.get("x"), note.get("y")) == (str(LEFT), str(TOP + 30))


def test_legend_names_every_mark() -> None:
    """The legend lists the seven marks, left to right, below the axis."""
    root = _root(plot(_cassette()))
    groups = list(root.iter(f"{SVG}g"))
    names = [g.findtext(f"{SVG}text") for g in groups]
    assert names == [
        "frame (height: bytes)",
        "response head",
        "waiting",
        "clean end",
        "reset",
        "closed early",
        "hang",
    ]
    x, y = 20.0, TOP + 3 * LANE + 6 + 46
    expected = []
    for name in names:
        expected.append(f"translate({x:.1f},{y:.1f})")
        x += 34 + 7.0 * len(name or "")
    assert [g.get("transform") for g in groups] == expected


def _ws() -> Interaction:
    messages = (
        WsMessage(10 * MS, False, True, b"x" * 16),
        WsMessage(20 * MS, True, True, b"y" * 4),
    )
    return Interaction(
        Request("GET", "wss://api.example.test/v1/realtime"),
        Response(101, "Switching Protocols", head_offset_ns=5 * MS),
        Ending(EndKind.COMPLETE, 6 * MS),
        websocket=WebSocketSession(messages, WsClose(40 * MS, WsCloseKind.CLOSE, 1000, "", True)),
    )


def test_websocket_messages_rise_and_hang() -> None:
    """Server messages are bars above the time line, client messages below; the end mark is at
    the close; the span includes the close."""
    root = _root(plot(Cassette((_ws(),))))
    base = TOP + 50
    titled = [r for r in root.iter(f"{SVG}rect") if "message" in (r.findtext(f"{SVG}title") or "")]
    h_server, h_client = 40.0, 2 + 38 * math.sqrt(4 / 16)
    assert [
        (r.get("x"), r.get("y"), r.get("height"), r.get("fill"), r.findtext(f"{SVG}title"))
        for r in titled
    ] == [
        (f"{_x(10, 40) - 1.25:.1f}", f"{base - h_server:.1f}", f"{h_server:.1f}", "#2f6fdf",
         "server message 0: +10 ms, 16 B"),
        (f"{_x(20, 40) - 1.25:.1f}", f"{base:.1f}", f"{h_client:.1f}", "#cbd5e1",
         "client message 1: +20 ms, 4 B"),
    ]  # fmt: skip
    (dot,) = list(root.iter(f"{SVG}circle"))[:-1]
    assert dot.get("cx") == f"{RIGHT:.1f}"


def test_the_demo_picture_is_unchanged() -> None:
    """The whole SVG of a demo cassette, byte for byte (colours, strokes, fonts included).

    After an intended change to the picture, regenerate the file with:
    python -c "from tests.core.tools.test_plot_svg import regenerate; regenerate()"
    """
    assert plot(_golden(), title="demo") == GOLDEN.read_text(encoding="utf-8")


def _golden() -> Cassette:
    """The demo session, a WebSocket session and the lanes of :func:`_cassette`."""
    return Cassette((*demo_cassette().interactions, _ws(), *_cassette().interactions))


def regenerate() -> None:
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(plot(_golden(), title="demo"), encoding="utf-8")


def _ticks(c: Cassette) -> list[str]:
    return [t.text or "" for t in _root(plot(c)).iter(f"{SVG}text") if t.get("text-anchor")]


def test_the_span_counts_every_time_an_interaction_has() -> None:
    """A head after the end, or an end after a WebSocket close, still fits on the axis."""
    late_head = _stream("/a", 80, [], EndKind.COMPLETE, 10)
    assert _ticks(Cassette((late_head,)))[-1] == "80 ms"
    ws = _ws()
    late_end = replace(ws, end=Ending(EndKind.COMPLETE, 100 * MS))
    assert _ticks(Cassette((late_end,)))[-1] == "100 ms"


def test_a_span_just_over_a_round_step_takes_the_next_step() -> None:
    """80.00005 ms at about 8 ticks needs 20 ms ticks (10 ms would give 9 ticks)."""
    c = Cassette((_stream("/a", 1, [], EndKind.COMPLETE, 80.00005),))
    assert _ticks(c) == [f"{n} ms" for n in range(0, 120, 20)]


def test_an_empty_picture_has_a_one_nanosecond_axis() -> None:
    """With nothing to draw, the axis spans 1 ns (two ticks), not 0 (no division by zero)."""
    assert _ticks(Cassette(())) == ["0 ms", "1e-06 ms"]


def test_everything_at_zero_stays_at_the_left_edge() -> None:
    """An interaction whose every time is 0 is drawn at x=270: head line, wait line, marks."""
    c = Cassette(
        (
            _stream("/a", 0, [], EndKind.COMPLETE, 0),
            _stream("/b", None, [], EndKind.NO_RESPONSE, 0),
        )
    )
    root = _root(plot(c))
    lines = [
        (ln.get("x1"), ln.get("x2"))
        for ln in root.iter(f"{SVG}line")
        if ln.get("stroke") in ("#1f2937", "#cbd5e1") and ln.get("y1") != "0"
    ]
    # Lane 0: the wait line and the head-to-end line; lane 1: the wait line.
    assert lines == [("270", "270.0"), ("270.0", "270.0"), ("270", "270.0")]


def test_websocket_messages_at_zero_and_empty() -> None:
    """Empty messages get 2 px bars; a message and a close at 0 are at the left edge."""
    messages = (WsMessage(0, False, True, b""), WsMessage(0, True, True, b""))
    ws = replace(
        _ws(),
        response=Response(101, "Switching Protocols", head_offset_ns=0),
        end=Ending(EndKind.COMPLETE, 0),
        websocket=WebSocketSession(messages, WsClose(0, WsCloseKind.CLOSE, 1000, "", True)),
    )
    root = _root(plot(Cassette((ws,))))
    bars = [r for r in root.iter(f"{SVG}rect") if "message" in (r.findtext(f"{SVG}title") or "")]
    assert [(b.get("x"), b.get("height")) for b in bars] == [(f"{LEFT - 1.25:.1f}", "2.0")] * 2
    (dot,) = list(root.iter(f"{SVG}circle"))[:-1]
    assert dot.get("cx") == f"{LEFT:.1f}"


def test_labels_of_32_characters_are_truncated_and_faults_joined_by_spaces() -> None:
    """A 32-character label becomes 30 and an ellipsis; several faults are listed."""
    c = Cassette((_stream("/" + "p" * 23, 1, [], EndKind.COMPLETE, 2, ("hang", "ttfb")),))
    texts = _texts(_root(plot(c)))
    assert "#0 POST /" + "p" * 21 + "…" in texts
    assert "faults: hang ttfb" in texts


def test_one_byte_frames_are_full_height() -> None:
    """The largest frame, however small, gets the tallest bar (40 px)."""
    c = Cassette((_stream("/a", 1, [(2, 1), (3, 0)], EndKind.COMPLETE, 4),))
    assert [b.get("height") for b in _frame_bars(_root(plot(c)))] == ["40.0", "2.0"]


def test_tick_positions_are_exact_to_a_tenth_of_a_pixel() -> None:
    """Eight 10 ms ticks over 670 px: the third is at 270 + 251.25, written 521.2."""
    c = Cassette((_stream("/a", 1, [], EndKind.COMPLETE, 80),))
    ticks = [t for t in _root(plot(c)).iter(f"{SVG}text") if t.get("text-anchor")]
    assert [(t.get("x"), t.text) for t in ticks][3] == ("521.2", "30 ms")


@pytest.mark.parametrize("lanes", [0, 1, 2])
def test_the_axis_is_below_the_lanes(lanes: int) -> None:
    """The axis line is 6 px below the last lane (below one lane's room when there are none)."""
    c = Cassette(tuple(_stream("/a", 1, [], EndKind.COMPLETE, 2) for _ in range(lanes)))
    root = _root(plot(c))
    (axis,) = [ln for ln in root.iter(f"{SVG}line") if ln.get("stroke") == "#64748b"]
    assert axis.get("y1") == str(TOP + LANE * max(1, lanes) + 6)
