"""The timing model for imported bodies whose source kept no timing (``--timing``).

A VCR.py cassette keeps the body and nothing about when its bytes came. ``--timing`` says which
offsets to give the head and the frames (one frame per event), in integer nanoseconds from the
request being sent:

- ``zero`` (the default): head and every frame at 0 — served as fast as the replay allows;
- ``even:ms=N``: the head at ``N`` ms, then one frame every ``N`` ms;
- ``tokens:rate=N``: the head at 0, then each frame after the one before by its estimated
  tokens at ``N`` tokens per second, a token being 4 bytes of the frame (rounded up) — the
  usual rule of thumb for English text in these providers' tokenizers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from replayproxy._errors import UsageError

__all__ = ["TimingModel", "offsets", "parse_timing", "spread"]

_NS_PER_MS = 1_000_000
_NS_PER_S = 1_000_000_000
_BYTES_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class TimingModel:
    """``kind`` is ``zero``, ``even`` or ``tokens``; ``value`` its ``ms`` or ``rate``."""

    kind: str = "zero"
    value: float = 0.0

    def __str__(self) -> str:
        if self.kind == "even":
            return f"even:ms={self.value:g}"
        if self.kind == "tokens":
            return f"tokens:rate={self.value:g}"
        return "zero"


def parse_timing(spec: str, *, flag: str = "--timing") -> TimingModel:
    """``zero``, ``even:ms=N`` or ``tokens:rate=N``; anything else is a one-line UsageError."""
    name, _, param = spec.strip().partition(":")
    want = {"even": "ms", "tokens": "rate"}
    if name == "zero" and not param:
        return TimingModel()
    if name in want:
        key, _, raw = param.partition("=")
        try:
            value = float(raw)
        except ValueError:
            value = -1.0
        if key == want[name] and math.isfinite(value) and value > 0:
            return TimingModel(name, value)
    raise UsageError(
        f"{flag} {spec!r}: expected zero, even:ms=N or tokens:rate=N (N a positive number)"
    )


def offsets(model: TimingModel, frames: Sequence[bytes]) -> tuple[int, list[int]]:
    """(head offset, one offset per frame) for ``frames`` under ``model``."""
    if model.kind == "even":
        step = round(model.value * _NS_PER_MS)
        return step, [step * (i + 2) for i in range(len(frames))]
    if model.kind == "tokens":
        at, out = 0, []
        for data in frames:
            tokens = max(1, -(-len(data) // _BYTES_PER_TOKEN))
            at += round(tokens * _NS_PER_S / model.value)
            out.append(at)
        return 0, out
    return 0, [0] * len(frames)


def spread(first_ns: int, last_ns: int, count: int) -> list[int]:
    """``count`` offsets evenly from ``first_ns`` to ``last_ns`` (a recorded first/last byte)."""
    if count <= 1:
        return [last_ns] * count
    span = max(0, last_ns - first_ns)
    return [first_ns + span * i // (count - 1) for i in range(count)]
