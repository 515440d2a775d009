"""Test support for replayproxy: a local LLM provider simulator serving real payloads, and
builders, strategies and a counting upstream for tests (as mitmproxy ships ``tflow``).

Public API (every name below is importable from ``replayproxy.testing``):

* :class:`Simulator` (``replayproxy.testing.simulator``) — threaded HTTP/HTTPS server on
  127.0.0.1; ``with Simulator(tls=ca_or_None, behavior=Behavior(...)) as sim: sim.url``;
  ``sim.push(...)``, ``sim.served``, ``sim.wait_served(n)``; also
  ``python -m replayproxy.testing.simulator``.
* :class:`Behavior`, :func:`plan`, :data:`KNOBS` — timing model and faults;
  per-request ``x-sim-*`` header / ``sim-*`` query knobs.
* :data:`STREAMS`, :class:`Stream`, :func:`expected_text` — the canned
  provider responses, framed per provider.
* :class:`Served`, :class:`SimRequest` — what the simulator did, for assertions.
* :class:`RealtimeSimulator` — a WebSocket simulator of OpenAI's Realtime API
  (``ws://127.0.0.1:PORT/v1/realtime``) for the `websockets` library and the openai SDK.
* :func:`request`, :func:`response`, :func:`frames`, :func:`interaction`,
  :func:`stream_interaction`, :func:`no_response`, :func:`cassette`, :func:`sse_frames`, the
  time units :data:`MS`, :data:`US`, :data:`S` and :func:`ns` — cassette
  values with valid defaults and keyword overrides; :func:`ws_text`, :func:`ws_interaction`,
  :func:`realtime_turns` — recorded WebSocket sessions.
* :class:`CountingUpstream` — a loopback "real upstream" that counts the
  connections and requests it gets (a replay must leave it at zero).
* :func:`capture_url`, :func:`capture_stream` and their async twins :func:`acapture_url`,
  :func:`acapture_stream` — read your own streaming endpoint from the front door into a
  :class:`StreamCapture` (timed frames, parsed events, how the body ended) with structural
  assertions (``assert_streamed``, ``assert_streaming_headers``, ``assert_framing``,
  ``assert_terminated``) and ``assert_stream_ok()``, the stream checker.
* ``replayproxy.testing.strategies`` — hypothesis strategies (splits, SSE streams,
  interactions, cassettes, WebSocket sessions); not imported here, so that importing this
  package never needs hypothesis.
"""

from typing import TYPE_CHECKING, Any

from replayproxy.testing._behavior import KNOBS, Behavior, Plan, Write, from_knobs, plan
from replayproxy.testing._builders import (
    CHAT_BODY,
    CHAT_URL,
    JSON_HEADERS,
    MS,
    PROVIDER_HOSTS,
    SSE_EVENTS,
    SSE_HEADERS,
    US,
    S,
    cassette,
    frames,
    interaction,
    no_response,
    ns,
    request,
    response,
    sse_frames,
    stream_interaction,
)
from replayproxy.testing._capture import StreamCapture
from replayproxy.testing._capture_data import CapturedEvent, CapturedFrame
from replayproxy.testing._capture_read import (
    acapture_stream,
    acapture_url,
    capture_stream,
    capture_url,
)
from replayproxy.testing._routes import route
from replayproxy.testing._server import Served, SimRequest
from replayproxy.testing._streams import STREAMS, Stream, expected_text
from replayproxy.testing._upstream import CountingUpstream
from replayproxy.testing._ws_builders import (
    REALTIME_URL,
    UPGRADE_HEADERS,
    realtime_turns,
    ws_interaction,
    ws_text,
)

if TYPE_CHECKING:
    from replayproxy.testing._realtime import RealtimeSimulator
    from replayproxy.testing.simulator import Simulator


def __getattr__(name: str) -> Any:
    # Imported lazily so `python -m replayproxy.testing.simulator` does not find the module
    # already imported by its own package (runpy's RuntimeWarning).
    if name == "Simulator":
        from replayproxy.testing.simulator import Simulator

        return Simulator
    if name == "RealtimeSimulator":
        from replayproxy.testing._realtime import RealtimeSimulator

        return RealtimeSimulator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
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
