"""The mitmproxy server internals :class:`~replayproxy._mitm.embedded.EmbeddedProxy` reaches into
to listen over TCP only and to close its servers cleanly (docs/contributing/mitmproxy-internals.md
§6).

Each is guarded: on a mitmproxy whose internals differ, it does nothing instead of failing.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

__all__ = ["rust_servers", "tcp_only", "wait_closed"]


def tcp_only(spec: Any) -> None:
    """Serve ``reverse:https://...`` over TCP only, without mitmproxy's extra UDP listener.

    For ``reverse:https`` mitmproxy also opens a UDP (HTTP/3) listener run by mitmproxy_rs on
    tokio threads. Those threads call into Python after the proxy has stopped; when that
    coincides with interpreter shutdown, the process dies with SIGSEGV (seen in ~1 of 12 runs
    on mitmproxy 12.3.1; gdb shows a tokio worker in ``take_gil`` -> ``pthread_exit``). Our
    clients speak HTTP/1.1 or HTTP/2 over TCP, so the UDP listener is dropped. INTERNAL API:
    ``ProxyMode.parse`` is cached, so the server setup gets this same object; the attribute is
    not a dataclass field, so the frozen dataclass allows setting it. Guarded.
    """
    if getattr(spec, "transport_protocol", None) == "both" and spec.type_name == "reverse":
        with contextlib.suppress(Exception):
            spec.transport_protocol = "tcp"


def rust_servers(proxyserver: Any) -> list[Any]:
    """The mitmproxy_rs (UDP) servers behind the proxy's modes; ``reverse:https`` has one.

    INTERNAL API (``ServerInstance._servers``, mitmproxy 11.0.2 and 12.3.1), guarded.
    """
    try:
        return [
            server
            for instance in proxyserver.servers
            for server in getattr(instance, "_servers", ())
            if not isinstance(server, asyncio.Server) and hasattr(server, "wait_closed")
        ]
    except Exception:
        return []


async def wait_closed(servers: list[Any]) -> None:
    # mitmproxy closes its UDP servers without waiting for them (a commented-out
    # wait_closed in mode_servers.py). Their tokio task then takes the GIL a little later;
    # if that happens while the interpreter is finalizing, the process dies with SIGSEGV
    # (seen ~1 in 14 runs of `record --upstream https://...` on 12.3.1). Wait here instead.
    for server in servers:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 2.0)
