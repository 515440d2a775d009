"""The structural assertions of a stream capture
(:class:`~replayproxy.testing._capture_data.Capture`) and the checker run on it: each fails
with an ``AssertionError`` whose message names the frames (index, arrival time, size) or events
that break it, so a failing test says what the endpoint did.

The ``StreamCapture`` methods of the same names call these.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from replayproxy._core.cassette.model import Frame
from replayproxy._core.check import Contract
from replayproxy._core.faults import FaultSpec, Outcome, outcome_of
from replayproxy._core.faults import parse as parse_fault
from replayproxy._errors import UsageError
from replayproxy.testing._capture_data import Capture, CapturedEvent, terminal_for

if TYPE_CHECKING:
    from replayproxy.checking import StreamReport

__all__ = [
    "assert_framing",
    "assert_stream_ok",
    "assert_streamed",
    "assert_streaming_headers",
    "assert_terminated",
    "cut_upstream",
]

_STREAM_TYPES = ("text/event-stream", "application/x-ndjson", "application/ndjson")
_SHOWN = 6  # frames listed in a message before "the rest"


def _size(n: int) -> str:
    return f"{n} bytes" if n < 1024 else f"{n} bytes ({n / 1024:.1f} KiB)"


def _frames_line(capture: Capture) -> str:
    """``2 frames: frame 0: 10 bytes at 11.0 ms, frame 1: 4096 bytes (4.0 KiB) at 2190.4 ms``"""
    frames = capture.frames
    parts = [
        f"frame {i}: {_size(len(f.data))} at {f.at_ms:.1f} ms"
        for i, f in enumerate(frames[:_SHOWN])
    ]
    if len(frames) > _SHOWN:
        rest = frames[_SHOWN:]
        total = sum(len(f.data) for f in rest)
        parts.append(
            f"the rest ({len(rest)} frames, {_size(total)}) between {rest[0].at_ms:.1f} "
            f"and {rest[-1].at_ms:.1f} ms"
        )
    count = f"{len(frames)} frame{'s' if len(frames) != 1 else ''}"
    return f"{count}, {_size(len(capture.body))} in all: " + ", ".join(parts)


def assert_streamed(capture: Capture, *, min_frames: int = 2, min_spread_ms: float = 0.0) -> None:
    """The body arrived in at least ``min_frames`` reads, the first and the last at least
    ``min_spread_ms`` apart: a buffering middleware or proxy sends it all at once, late."""
    frames = capture.frames
    problems = []
    if len(frames) < min_frames:
        problems.append(f"fewer than {min_frames} frames")
    spread = frames[-1].at_ms - frames[0].at_ms if frames else 0.0
    if frames and spread < min_spread_ms:
        problems.append(
            f"spread over {spread:.1f} ms (frame 0 to frame {len(frames) - 1}), less than "
            f"{min_spread_ms:g} ms"
        )
    if problems:
        raise AssertionError(
            f"{capture.method} {capture.url} was not streamed ({'; '.join(problems)}): the "
            f"body was buffered: {_frames_line(capture)}"
        )


def _media(value: str) -> str:
    return value.split(";", 1)[0].strip().lower()


def assert_streaming_headers(capture: Capture, *, accel_buffering: bool = False) -> None:
    """Headers a stream needs to reach a browser unbuffered; lists every problem at once."""
    headers = capture.headers
    problems = []
    media = _media(headers.get("content-type", ""))
    if media not in _STREAM_TYPES:
        shown = repr(headers["content-type"]) if "content-type" in headers else "missing"
        problems.append(f"content-type is {shown}, not text/event-stream or application/x-ndjson")
    directives = {d.strip().lower() for d in headers.get("cache-control", "").split(",")}
    if "no-cache" not in directives:
        shown = repr(headers["cache-control"]) if "cache-control" in headers else "missing"
        problems.append(
            f"cache-control is {shown}, not no-cache (caches and proxies may hold the stream)"
        )
    encoding = headers.get("content-encoding", "").strip().lower()
    if encoding and encoding != "identity":
        problems.append(
            f"content-encoding is {encoding!r}: a compressing middleware (GZip) buffers the "
            "stream until its compressor flushes; exclude streaming responses from it"
        )
    if accel_buffering and headers.get("x-accel-buffering", "").strip().lower() != "no":
        shown = repr(headers["x-accel-buffering"]) if "x-accel-buffering" in headers else "missing"
        problems.append(f"x-accel-buffering is {shown}, not 'no' (nginx buffers the stream)")
    if problems:
        listed = "".join(f"\n  - {p}" for p in problems)
        raise AssertionError(
            f"{capture.method} {capture.url}: {len(problems)} streaming header "
            f"problem{'s' if len(problems) != 1 else ''}:{listed}"
        )


def _frame_at(capture: Capture, offset: int) -> int:
    """The index of the frame holding body byte ``offset``."""
    seen = 0
    for i, frame in enumerate(capture.frames):
        seen += len(frame.data)
        if offset < seen:
            return i
    return len(capture.frames) - 1


def _shown(data: bytes, limit: int = 80) -> str:
    return repr(data) if len(data) <= limit else repr(data[:limit]) + f"... ({len(data)} bytes)"


def assert_framing(capture: Capture) -> None:
    """No unterminated trailing frame: every byte belongs to a complete event (or comment)."""
    if not capture.trailing:
        return
    offset = len(capture.body) - len(capture.trailing)
    first, last = _frame_at(capture, offset), len(capture.frames) - 1
    where = f"frame {first}" if first == last else f"frames {first}-{last}"
    frame = capture.frames[first]
    media = _media(capture.content_type)
    kind = "" if media in _STREAM_TYPES else f"; content-type {media or 'missing'}: not a stream"
    raise AssertionError(
        f"{capture.method} {capture.url}: the body ends with {len(capture.trailing)} bytes "
        f"after the last complete event (from byte {offset}, {where}, the first at "
        f"{frame.at_ms:.1f} ms), never terminated by a blank line / newline; clients drop "
        f"them: {_shown(capture.trailing)} (end: {capture.end}, {len(capture.events)} events{kind})"
    )


def _describe(capture: Capture, index: int, kind: str | None) -> str:
    ev = capture.events[index]
    return f"event {index} ({kind or _short(ev)}) at {ev.at_ms:.1f} ms"


def _short(ev: CapturedEvent) -> str:
    return ev.text if len(ev.text) <= 40 else ev.text[:37] + "..."


def assert_terminated(
    capture: Capture,
    *,
    terminal: str | Sequence[str] | None = None,
    provider: str | None = None,
    contract: Contract | None = None,
) -> None:
    """Exactly one terminal event, the last one, and the body ended cleanly after it (the
    connection was not left open, nor cut). The terminal events are ``terminal`` (types), the
    ``contract``'s or the ``provider``'s (by name, or detected from the URL)."""
    which = terminal_for(
        terminal=terminal,
        provider=provider,
        contract=contract,
        url=capture.url,
        content_type=capture.content_type,
    )
    if not which:
        raise UsageError(
            f"assert_terminated(): no terminal event is known for {capture.url} "
            f"({capture.content_type or 'no content type'}); pass terminal=[event types]"
        )
    names = ", ".join(sorted(which.names)) or "the provider's terminal event"
    found = [i for i, ev in enumerate(capture.events) if which.matches(ev)]
    where = f"{capture.method} {capture.url}"
    count = len(capture.events)
    if not found:
        last = (
            _describe(capture, count - 1, which.kind(capture.events[-1]))
            if count
            else "there are no events"
        )
        raise AssertionError(
            f"{where}: no terminal event ({names}) among {count} events; the last is {last}; "
            f"the body ended {capture.end!r} at frame {len(capture.frames) - 1}"
        )
    if len(found) > 1:
        listed = ", ".join(_describe(capture, i, which.kind(capture.events[i])) for i in found)
        raise AssertionError(f"{where}: {len(found)} terminal events, not one: {listed}")
    index = found[0]
    term = _describe(capture, index, which.kind(capture.events[index]))
    if index != count - 1:
        after = ", ".join(
            _describe(capture, i, which.kind(capture.events[i])) for i in range(index + 1, count)
        )
        raise AssertionError(f"{where}: terminal {term} is not the last event: then {after}")
    if capture.end == "timeout" or capture.closed_after_terminal is False:
        raise AssertionError(
            f"{where}: after terminal {term} the connection stayed open: the body did not end "
            f"within the read timeout (end: {capture.end}, last frame "
            f"{len(capture.frames) - 1} at {capture.frames[-1].at_ms:.1f} ms)"
        )
    if capture.end != "complete":
        raise AssertionError(
            f"{where}: after terminal {term} the body ended {capture.end!r}, not cleanly "
            "(its framing was never finished)"
        )


def cut_upstream(requests: Sequence[Any]) -> bool:
    """Whether the upstream stream was incomplete: any fault applied to the replay's seen
    ``requests`` (objects with ``.faults``: fault specs) has an incomplete stream or a hang
    as its outcome."""
    for seen in requests:
        for spec in getattr(seen, "faults", ()):
            name = spec.name if isinstance(spec, FaultSpec) else parse_fault(str(spec)).name
            if outcome_of(name) in (Outcome.INCOMPLETE, Outcome.HANG):
                return True
    return False


def _report_text(capture: Capture, report: StreamReport) -> str:
    lines = []
    for violation in report.violations:
        line = f"  {violation}"
        if violation.event is not None and violation.event < len(capture.events):
            line += f" (event {violation.event} arrived at "
            line += f"{capture.events[violation.event].at_ms:.1f} ms)"
        lines.append(line)
    notes = "".join(f"\n  note: {n}" for n in report.notes)
    return "\n".join(lines) + notes


def assert_stream_ok(
    capture: Capture,
    *,
    provider: str | None = None,
    contract: Contract | str | os.PathLike[str] | None = None,
    record: Mapping[str, Any] | None = None,
    upstream_incomplete: bool | None = None,
    requests: Sequence[Any] | None = None,
) -> StreamReport:
    """Run :func:`replayproxy.checking.check_stream` over the capture's frames (with their
    arrival times, for a contract's ``incremental = true``), URL and content type; raise
    ``AssertionError`` with the report when it has errors, else return it. ``record``: the
    stored record the contract's ``fields.record`` must match; ``upstream_incomplete``: whether
    the provider stream behind the endpoint was cut, or else derived from ``requests`` (see
    :func:`cut_upstream`)."""
    from replayproxy.checking import check_stream

    if upstream_incomplete is not None and requests is not None:
        raise UsageError("assert_stream_ok() takes upstream_incomplete= or requests=, not both")
    incomplete = bool(upstream_incomplete) or (requests is not None and cut_upstream(requests))
    # Frames with their arrival offsets, so a contract's `incremental = true` is judged.
    frames = [Frame(round(f.at_ms * 1_000_000), f.data) for f in capture.frames]
    report = check_stream(
        frames,
        provider=provider,
        contract=contract,
        url=capture.url,
        content_type=capture.content_type or None,
        record=record,
        upstream_incomplete=incomplete,
    )
    if report.errors:
        errors = len(report.errors)
        raise AssertionError(
            f"{capture.method} {capture.url}: the checker found {errors} "
            f"error{'s' if errors != 1 else ''} ({report.provider}, {report.dialect}):\n"
            + _report_text(capture, report)
        )
    return report
