"""The testing API is the one place for test builders: its public names are pinned, and the
test tree defines no private copy of the time units or of a counting upstream."""

from __future__ import annotations

import re
from pathlib import Path

import replayproxy.testing

TESTS = Path(__file__).resolve().parents[1]

# A module-level (or class-level) definition of a time unit in ns: what replayproxy.testing
# exports as MS, US and S, under the names such a copy usually takes (SEC, NS_PER_S, _MS).
_UNIT = re.compile(
    r"^\s*_?(NS_PER_)?(MS|US|S|SEC|SECOND|MILLISECOND|MICROSECOND)\s*(:\s*int\s*)?="
    r"\s*1_?000(_?000){0,2}\s*(#.*)?$",
    re.M,
)
# A listening socket that counts what it accepts (CountingUpstream's job): a module that
# accepts connections and adds one to a count or a connections counter.
_ACCEPT = re.compile(r"\.accept\(\)")
_COUNTER = re.compile(r"^\s*[\w.]*(count|connections)\w*\s*\+=\s*1\b", re.M)


def _modules() -> list[tuple[str, str]]:
    here = Path(__file__).resolve()
    return [
        (str(p.relative_to(TESTS)), p.read_text(encoding="utf-8"))
        for p in sorted(TESTS.rglob("*.py"))
        if p != here
    ]


def _offenders(pattern: re.Pattern[str]) -> list[str]:
    return [
        f"{name}: {m.group(0).strip()}" for name, text in _modules() for m in pattern.finditer(text)
    ]


def test_no_test_module_defines_its_own_time_unit() -> None:
    """MS = 1_000_000 (or US, S, under any spelling) comes from replayproxy.testing only."""
    assert _offenders(_UNIT) == []


def test_no_test_module_defines_its_own_counting_upstream() -> None:
    """The fake upstream that counts connections is replayproxy.testing.CountingUpstream."""
    counting = [n for n, text in _modules() if _ACCEPT.search(text) and _COUNTER.search(text)]
    assert counting == []


def test_the_public_names_are_pinned() -> None:
    """replayproxy.testing exports exactly these names, each of which resolves."""
    assert replayproxy.testing.__all__ == [
        "CHAT_BODY",
        "CHAT_URL",
        "JSON_HEADERS",
        "KNOBS",
        "MS",
        "PROVIDER_HOSTS",
        "REALTIME_URL",
        "SSE_EVENTS",
        "SSE_HEADERS",
        "STREAMS",
        "UPGRADE_HEADERS",
        "US",
        "Behavior",
        "CapturedEvent",
        "CapturedFrame",
        "CountingUpstream",
        "Plan",
        "RealtimeSimulator",
        "S",
        "Served",
        "SimRequest",
        "Simulator",
        "Stream",
        "StreamCapture",
        "Write",
        "acapture_stream",
        "acapture_url",
        "capture_stream",
        "capture_url",
        "cassette",
        "expected_text",
        "frames",
        "from_knobs",
        "interaction",
        "no_response",
        "ns",
        "plan",
        "realtime_turns",
        "request",
        "response",
        "route",
        "sse_frames",
        "stream_interaction",
        "ws_interaction",
        "ws_text",
    ]
    for name in replayproxy.testing.__all__:
        assert getattr(replayproxy.testing, name) is not None
