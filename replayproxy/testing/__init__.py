"""Test support for replayproxy: a local LLM provider simulator serving real payloads.

Public API (details in each module's docstring):

* :class:`Simulator` (``replayproxy.testing.simulator``) — threaded HTTP/HTTPS server on
  127.0.0.1; ``with Simulator(tls=ca_or_None, behavior=Behavior(...)) as sim: sim.url``;
  ``sim.push(...)``, ``sim.served``, ``sim.wait_served(n)``; also
  ``python -m replayproxy.testing.simulator``.
* :class:`Behavior`, :func:`plan`, :data:`KNOBS` (``.behavior``) — timing model and faults;
  per-request ``x-sim-*`` header / ``sim-*`` query knobs.
* :data:`STREAMS`, :class:`Stream`, :func:`expected_text` (``.streams``) — the canned
  provider responses, framed per provider.
* :class:`Served`, :class:`SimRequest` (``.server``) — what the simulator did, for assertions.
* :class:`RealtimeSimulator` (``.realtime``) — a WebSocket simulator of OpenAI's Realtime API
  (``ws://127.0.0.1:PORT/v1/realtime``) for the `websockets` library and the openai SDK.
"""

from typing import TYPE_CHECKING, Any

from replayproxy.testing.behavior import KNOBS, Behavior, Plan, Write, from_knobs, plan
from replayproxy.testing.routes import route
from replayproxy.testing.server import Served, SimRequest
from replayproxy.testing.streams import STREAMS, Stream, expected_text

if TYPE_CHECKING:
    from replayproxy.testing.realtime import RealtimeSimulator
    from replayproxy.testing.simulator import Simulator


def __getattr__(name: str) -> Any:
    # Imported lazily so `python -m replayproxy.testing.simulator` does not find the module
    # already imported by its own package (runpy's RuntimeWarning).
    if name == "Simulator":
        from replayproxy.testing.simulator import Simulator

        return Simulator
    if name == "RealtimeSimulator":
        from replayproxy.testing.realtime import RealtimeSimulator

        return RealtimeSimulator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "KNOBS",
    "STREAMS",
    "Behavior",
    "Plan",
    "RealtimeSimulator",
    "Served",
    "SimRequest",
    "Simulator",
    "Stream",
    "Write",
    "expected_text",
    "from_knobs",
    "plan",
    "route",
]
