"""A timeline picture of a cassette, as SVG text written directly (no plotting dependency).

One lane per interaction: a grey line while waiting for the response head, a dark tick at the
head, one bar per frame at its arrival time (height grows with its size, on a square-root
scale so a 20-byte delta and a 2 KB chunk both stay visible), and a mark for how it ended:
a green dot for a clean end, a red cross for a reset, an orange bar for a close without the
end of the body, an orange dashed line running off the right edge for a hang. The time axis
has round millisecond ticks; the legend explains the marks.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from replayproxy._core.cassette.model import Cassette, EndKind, Interaction
from replayproxy._core.cassette.texttokens import escape
from replayproxy._core.tools.inspect import interaction_row

__all__ = ["plot"]

_WIDTH = 980
_LEFT = 270  # room for the lane labels
_RIGHT = 40
_TOP = 56
_LANE = 64
_BAR_MAX = 40  # tallest frame bar, px
_BOTTOM = 78  # axis labels + legend
_FONT = "font-family='ui-sans-serif,system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif'"

_FRAME = "#2f6fdf"
_HEAD = "#1f2937"
_WAIT = "#cbd5e1"
_OK = "#16a34a"
_BAD = "#dc2626"
_WARN = "#ea8a00"


def _text(s: str) -> str:
    return html.escape(s, quote=True)


def _nice_step(span_ms: float, target: int = 8) -> float:
    """A round tick step (1, 2 or 5 x 10^k ms) giving about ``target`` ticks over ``span_ms``."""
    raw = max(span_ms / target, 1e-6)
    power = 10.0 ** math.floor(math.log10(raw))  # power <= raw < 10 * power
    for m in (1, 2, 5):
        if raw <= m * power:
            return m * power
    return 10 * power


def _fmt_tick(ms: float, step_ms: float) -> str:
    # One unit along the whole axis: seconds once the ticks are whole seconds apart.
    if step_ms >= 1000:
        return f"{ms / 1000:g} s"
    return f"{ms:g} ms"


def _fmt_bytes(n: int) -> str:
    if n < 10_000:
        return f"{n} B"
    if n < 10_000_000:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 1024 / 1024:.1f} MiB"


def _end_of(x: Interaction) -> int:
    resp = x.response
    times = [x.end.offset_ns, *(f.offset_ns for f in x.frames)]
    if x.websocket is not None:
        times += [x.websocket.close.offset_ns, *(m.offset_ns for m in x.websocket.messages)]
    if resp is not None:
        times.append(resp.head_offset_ns)
    return max(0, *times)


def _end_mark(kind: EndKind, ex: float, y: float, right: float) -> list[str]:
    if kind == EndKind.COMPLETE:
        return [f"<circle cx='{ex:.1f}' cy='{y:.1f}' r='5' fill='{_OK}'><title>clean end</title>"
                "</circle>"]  # fmt: skip
    if kind in (EndKind.RESET, EndKind.NO_RESPONSE):
        d = 5
        return [
            f"<path d='M{ex - d:.1f},{y - d:.1f} L{ex + d:.1f},{y + d:.1f} M{ex - d:.1f},"
            f"{y + d:.1f} L{ex + d:.1f},{y - d:.1f}' stroke='{_BAD}' stroke-width='2.5'>"
            f"<title>{kind.value}</title></path>"
        ]
    if kind == EndKind.HANG:
        return [
            f"<line x1='{ex:.1f}' y1='{y:.1f}' x2='{right:.1f}' y2='{y:.1f}' stroke='{_WARN}' "
            "stroke-width='2' stroke-dasharray='5 4'/>",
            f"<path d='M{right - 7:.1f},{y - 5:.1f} L{right:.1f},{y:.1f} L{right - 7:.1f},"
            f"{y + 5:.1f}' fill='none' stroke='{_WARN}' stroke-width='2'>"
            "<title>hang</title></path>",
        ]
    return [
        f"<rect x='{ex - 1.5:.1f}' y='{y - 8:.1f}' width='3' height='16' fill='{_WARN}'>"
        f"<title>{kind.value}</title></rect>"
    ]


def _lane(i: int, x: Interaction, top: float, sx: float, max_bytes: int, right: float) -> list[str]:
    base = top + _LANE - 14  # the lane's time line
    row = interaction_row(i, x)
    status = "no response" if row.status is None else str(row.status)
    label = escape(f"#{i} {x.request.method} {x.request.path}".encode())
    if len(label) > 31:
        label = label[:30] + "…"
    frames = f"{row.frames} frame" + ("" if row.frames == 1 else "s")
    detail = f"{status} · {frames} · {_fmt_bytes(row.bytes)} · {row.end}"
    out = [
        f"<text x='12' y='{top + 21:.1f}' font-size='13' font-weight='600' fill='{_HEAD}'>"
        f"{_text(label)}</text>",
        f"<text x='12' y='{top + 37:.1f}' font-size='11' fill='#475569'>{_text(detail)}</text>",
    ]
    if x.faults:
        faults = escape(" ".join(x.faults).encode())[:40]
        out.append(
            f"<text x='12' y='{top + 52:.1f}' font-size='10.5' fill='{_BAD}'>"
            f"faults: {_text(faults)}</text>"
        )
    x0 = _LEFT
    head_ns = max(0, x.response.head_offset_ns) if x.response else None
    end_x = _LEFT + max(0, x.end.offset_ns) * sx
    wait_to = _LEFT + (head_ns if head_ns is not None else max(0, x.end.offset_ns)) * sx
    out.append(
        f"<line x1='{x0}' y1='{base:.1f}' x2='{wait_to:.1f}' y2='{base:.1f}' stroke='{_WAIT}' "
        "stroke-width='3' stroke-linecap='round'/>"
    )
    if head_ns is not None:
        hx = _LEFT + head_ns * sx
        last_x = _LEFT + _end_of(x) * sx
        out.append(
            f"<line x1='{hx:.1f}' y1='{base:.1f}' x2='{last_x:.1f}' y2='{base:.1f}' "
            f"stroke='{_HEAD}' stroke-width='1'/>"
        )
        out.append(
            f"<rect x='{hx - 1.5:.1f}' y='{base - 14:.1f}' width='3' height='20' fill='{_HEAD}'>"
            f"<title>head +{head_ns / 1e6:g} ms</title></rect>"
        )
    for n, f in enumerate(x.frames):
        fx = _LEFT + max(0, f.offset_ns) * sx
        h = 2 + (_BAR_MAX - 2) * math.sqrt(len(f.data) / max_bytes)
        out.append(
            f"<rect x='{fx - 1.25:.1f}' y='{base - h:.1f}' width='2.5' height='{h:.1f}' "
            f"fill='{_FRAME}' fill-opacity='0.8'><title>frame {n}: +{f.offset_ns / 1e6:g} ms, "
            f"{len(f.data)} B</title></rect>"
        )
    if x.websocket is not None:
        # Server messages rise above the time line like frames; client messages hang below it.
        for n, m in enumerate(x.websocket.messages):
            mx = _LEFT + max(0, m.offset_ns) * sx
            h = 2 + (_BAR_MAX - 2) * math.sqrt(len(m.data) / max_bytes)
            y, color = (base, _WAIT) if m.from_client else (base - h, _FRAME)
            out.append(
                f"<rect x='{mx - 1.25:.1f}' y='{y:.1f}' width='2.5' height='{h:.1f}' "
                f"fill='{color}' fill-opacity='0.8'><title>{m.sender} message {n}: "
                f"+{m.offset_ns / 1e6:g} ms, {len(m.data)} B</title></rect>"
            )
        end_x = _LEFT + max(0, x.websocket.close.offset_ns) * sx
    out.extend(_end_mark(x.end.kind, end_x, base, right))
    return out


def _legend(y: float) -> list[str]:
    items = [
        (f"<rect x='0' y='-9' width='3' height='14' fill='{_FRAME}'/>", "frame (height: bytes)"),
        (f"<rect x='0' y='-9' width='3' height='14' fill='{_HEAD}'/>", "response head"),
        (f"<line x1='-6' y1='0' x2='8' y2='0' stroke='{_WAIT}' stroke-width='3'/>", "waiting"),
        (f"<circle cx='2' cy='-2' r='5' fill='{_OK}'/>", "clean end"),
        (f"<path d='M-3,-7 L7,3 M-3,3 L7,-7' stroke='{_BAD}' stroke-width='2.5'/>", "reset"),
        (f"<rect x='0' y='-9' width='3' height='14' fill='{_WARN}'/>", "closed early"),
        (f"<line x1='-6' y1='-2' x2='12' y2='-2' stroke='{_WARN}' stroke-width='2' "
         "stroke-dasharray='5 4'/>", "hang"),
    ]  # fmt: skip
    out: list[str] = []
    x = 20.0
    for mark, name in items:
        out.append(f"<g transform='translate({x:.1f},{y:.1f})'>{mark}")
        out.append(f"<text x='16' y='2' font-size='11.5' fill='#334155'>{name}</text></g>")
        x += 34 + 7.0 * len(name)
    return out


def plot(cassette: Cassette, indices: Sequence[int] | None = None, title: str = "") -> str:
    """The SVG document (text) of the chosen interactions' timelines (all when ``None``)."""
    chosen = list(range(len(cassette.interactions))) if indices is None else list(indices)
    lanes = [(i, cassette.interactions[i]) for i in chosen]
    span_ns = max([_end_of(x) for _, x in lanes] + [1])
    step_ms = _nice_step(span_ns / 1e6)
    axis_ms = math.ceil(span_ns / 1e6 / step_ms) * step_ms
    right = _WIDTH - _RIGHT
    sx = (right - _LEFT) / (axis_ms * 1e6)
    max_bytes = max(  # at least 1: empty frames get the smallest bar, not a division by 0
        [len(f.data) for _, x in lanes for f in x.frames]
        + [len(m.data) for _, x in lanes if x.websocket for m in x.websocket.messages]
        + [1]
    )
    height = _TOP + _LANE * max(1, len(lanes)) + _BOTTOM
    axis_y = _TOP + _LANE * max(1, len(lanes)) + 6
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{_WIDTH}' height='{height}' "
        f"viewBox='0 0 {_WIDTH} {height}' {_FONT}>",
        f"<rect width='{_WIDTH}' height='{height}' fill='#ffffff'/>",
        f"<text x='12' y='30' font-size='16' font-weight='700' fill='{_HEAD}'>"
        f"{_text(title or 'replayproxy cassette timeline')}</text>",
    ]
    for n in range(1, len(lanes), 2):  # zebra stripes first, under the grid and the marks
        out.append(
            f"<rect x='0' y='{_TOP + n * _LANE}' width='{_WIDTH}' height='{_LANE}' fill='#f6f8fb'/>"
        )
    ticks = round(axis_ms / step_ms)
    for t in range(ticks + 1):
        tx = _LEFT + t * step_ms * 1e6 * sx
        out.append(
            f"<line x1='{tx:.1f}' y1='{_TOP - 6}' x2='{tx:.1f}' y2='{axis_y}' stroke='#e2e8f0'/>"
        )
        out.append(
            f"<text x='{tx:.1f}' y='{axis_y + 16}' font-size='11' fill='#475569' "
            f"text-anchor='middle'>{_fmt_tick(round(t * step_ms, 6), step_ms)}</text>"
        )
    out.append(f"<line x1='{_LEFT}' y1='{axis_y}' x2='{right}' y2='{axis_y}' stroke='#64748b'/>")
    for n, (i, x) in enumerate(lanes):
        out.extend(_lane(i, x, _TOP + n * _LANE, sx, max_bytes, right))
    if not lanes:
        out.append(f"<text x='{_LEFT}' y='{_TOP + 30}' font-size='13'>(no interactions)</text>")
    out.extend(_legend(axis_y + 46))
    out.append("</svg>")
    return "\n".join(out) + "\n"
