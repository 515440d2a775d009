"""A tiny ``mitmdump -s`` script for the benchmark's plain-mitmproxy baselines.

- Writes the port mitmdump listens on (``listen_port=0``) to ``$BENCH_PORT_FILE`` once its
  servers are up, so the harness needs no fixed ports.
- With ``$BENCH_STREAM=1`` it streams every response (``flow.response.stream = True`` in
  ``responseheaders``): plain streaming passthrough, the floor for the proxy path and the
  baseline for recording overhead. Without it (mitmproxy's own ``--server-replay``) it only
  reports the port.
"""

from __future__ import annotations

import os
from typing import Any

from mitmproxy import ctx, http

_STREAM = os.environ.get("BENCH_STREAM") == "1"


def running() -> None:
    addons: Any = ctx.master.addons  # untyped in mitmproxy 11
    ps = addons.get("proxyserver")
    port = next(addr[1] for s in ps.servers for addr in s.listen_addrs)
    path = os.environ["BENCH_PORT_FILE"]
    with open(path + ".tmp", "w") as fh:
        fh.write(str(port))
    os.replace(path + ".tmp", path)


def responseheaders(flow: http.HTTPFlow) -> None:
    if _STREAM and flow.response is not None:
        flow.response.stream = True
