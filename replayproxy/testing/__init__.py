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
"""

from replayproxy.testing.behavior import KNOBS, Behavior, Plan, Write, from_knobs, plan
from replayproxy.testing.routes import route
from replayproxy.testing.server import Served, SimRequest
from replayproxy.testing.simulator import Simulator
from replayproxy.testing.streams import STREAMS, Stream, expected_text

__all__ = [
    "KNOBS",
    "STREAMS",
    "Behavior",
    "Plan",
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
