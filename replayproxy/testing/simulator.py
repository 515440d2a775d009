"""The local provider simulator: a real HTTP/1.1 (or HTTPS) server on 127.0.0.1, in a thread.

Synchronous use (tests)::

    with Simulator() as sim:                       # or Simulator(tls=trustme_ca)
        httpx.post(sim.url + "/v1/chat/completions", json={"stream": True, ...})
        served = sim.wait_served(1)                # -> [Served], see replayproxy.testing._server

API::

    Simulator(*, tls=None, behavior=Behavior(), host="127.0.0.1", port=0)
        tls: None (plain HTTP), a trustme.CA (a cert for 127.0.0.1/localhost/::1 is issued from
             it; trustme is never imported here), or a ready ssl.SSLContext (server side).
    .start() -> Simulator / .stop() / context manager
    .url -> "http://127.0.0.1:PORT" (https:// with tls); .host, .port, .scheme
    .behavior            default Behavior for requests (settable at any time)
    .push(*behaviors)    one-shot Behaviors used by the next requests, in order, before .behavior
    .served -> list[Served]   responses finished so far (a copy), in finishing order
    .connections -> int  TCP connections accepted so far
    .wait_served(n, timeout=5.0) -> list[Served]   waits until >= n finished, else TimeoutError
    .clear()             forget served records

Per-request knobs (``x-sim-*`` headers / ``sim-*`` query) are listed in
:mod:`replayproxy.testing._behavior`; routing in :mod:`replayproxy.testing._routes`.

A hung response (``hang_after``) is recorded when the client disconnects or the simulator stops.

Command line (for CLI tests, benchmarks and scripts)::

    python -m replayproxy.testing.simulator [--port 0] [--tls-cert PEM --tls-key PEM]
        [--ttfb-ms MS] [--gap-ms MS[,MS...]] [--model SCALE]

prints ``listening on http://127.0.0.1:PORT`` (flushed) and serves until SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import signal
import ssl
import sys
import threading
from types import TracebackType
from typing import Any

from replayproxy._errors import UsageError
from replayproxy.testing._behavior import Behavior, from_knobs
from replayproxy.testing._server import Connection, Served

__all__ = ["Simulator", "main", "server_context"]


def server_context(tls: Any) -> ssl.SSLContext:
    """A server-side SSLContext from a trustme.CA (duck-typed) or an SSLContext as is."""
    if isinstance(tls, ssl.SSLContext):
        return tls
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.issue_cert("127.0.0.1", "localhost", "::1").configure_cert(ctx)
    ctx.set_alpn_protocols(["http/1.1"])  # HTTP/1.1 only, even for clients offering h2
    return ctx


class Simulator:
    """Serves the canned provider streams from a background thread with its own event loop."""

    def __init__(
        self,
        *,
        tls: Any = None,
        behavior: Behavior | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.behavior = behavior if behavior is not None else Behavior()
        self.host = host
        self.port = port
        self.scheme = "https" if tls is not None else "http"
        self._ssl = server_context(tls) if tls is not None else None
        self._queue: collections.deque[Behavior] = collections.deque()
        self._served: list[Served] = []
        self._cond = threading.Condition()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.connections = 0
        """TCP connections accepted so far (e.g. to assert a replay made none)."""

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    # -- configuration and records (any thread) ------------------------------------------

    def push(self, *behaviors: Behavior) -> None:
        """Queue one-shot behaviors for the next requests (first in, first used)."""
        with self._cond:
            self._queue.extend(behaviors)

    def _next_behavior(self) -> Behavior:
        with self._cond:
            return self._queue.popleft() if self._queue else self.behavior

    def _on_served(self, served: Served) -> None:
        with self._cond:
            self._served.append(served)
            self._cond.notify_all()

    @property
    def served(self) -> list[Served]:
        with self._cond:
            return list(self._served)

    def clear(self) -> None:
        with self._cond:
            self._served.clear()

    def wait_served(self, n: int, timeout: float = 5.0) -> list[Served]:
        """Block until at least ``n`` responses have finished; return them all."""
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._served) >= n, timeout):
                raise TimeoutError(f"simulator served {len(self._served)} of {n} in {timeout}s")
            return list(self._served)

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> Simulator:
        if self._thread is not None:
            raise UsageError("simulator already started")
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        error: list[BaseException] = []

        def run() -> None:
            assert self._loop is not None
            asyncio.set_event_loop(self._loop)
            try:
                self._loop.run_until_complete(self._listen())
            except BaseException as e:  # reported to start()'s caller
                error.append(e)
                ready.set()
                return
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="replayproxy-simulator", daemon=True)
        self._thread.start()
        ready.wait(10)
        if error:
            self._thread.join(5)
            self._loop.close()
            self._thread = None
            raise error[0]
        return self

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(
            self._accept, self.host, self.port, ssl=self._ssl, limit=256 * 1024
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        with self._cond:
            self.connections += 1
        try:
            await Connection(reader, writer, self._next_behavior, self._on_served).run()
        except asyncio.CancelledError:
            # Only our own shutdown cancels these. Ending normally avoids CPython 3.12.1's
            # StreamReaderProtocol calling task.exception() on a cancelled task (noisy log).
            writer.transport.abort()
        finally:
            self._tasks.discard(task)

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        # Cancel connection handlers and also asyncio's own pending TLS-handshake tasks.
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        if others:
            await asyncio.wait(others, timeout=5)
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 5)

    def stop(self) -> None:
        """Stop serving, cancel open connections (recording hung ones), join the thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        if not thread.is_alive():
            loop.close()
        self._loop = self._thread = None

    def __enter__(self) -> Simulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


_DESCRIPTION = """\
A local stand-in for the LLM provider APIs: it streams real provider payloads (shipped in
replayproxy/testing/payloads) with provider-like timing, offline, on 127.0.0.1. Use it to try
`replayproxy record` without an API key, or as the upstream in tests.

Routes (POST unless noted; anything else is a 404 in the provider's error shape):
  /v1/chat/completions                       OpenAI Chat (tool call when the body has "tools";
                                             one JSON body when "stream" is not true)
  /v1/responses                              OpenAI Responses
  /v1/messages                               Anthropic Messages (tool use with "tools")
  /v1beta/models/MODEL:streamGenerateContent Gemini (SSE, as ?alt=sse; /v1/models/... too)
  /model/MODEL/converse-stream               Bedrock ConverseStream (AWS event stream)
  GET /v1/models                             OpenAI model list
Per-request knobs (x-sim-* headers or sim-* query parameters: ttfb, gaps, errors, resets,
...) are listed in replayproxy.testing._behavior.

Prints "listening on URL" once ready; stops cleanly on Ctrl-C or SIGTERM."""

_EPILOG = """\
HTTPS: make a throwaway CA and a certificate for 127.0.0.1/localhost with trustme (installed
with replayproxy's test extra, or `pip install trustme`):

  python -m trustme        # writes server.pem, server.key and client.pem (the CA) here
  python -m replayproxy.testing.simulator --tls-cert server.pem --tls-key server.key

Clients then trust client.pem: SSL_CERT_FILE=client.pem, or
`replayproxy record --upstream https://127.0.0.1:PORT --upstream-ca client.pem ...`."""


def main(argv: list[str] | None = None) -> int:
    """Run a simulator in the foreground (see module doc)."""
    ap = argparse.ArgumentParser(
        prog="python -m replayproxy.testing.simulator",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free port)")
    ap.add_argument("--tls-cert", help="PEM file: server certificate chain")
    ap.add_argument("--tls-key", help="PEM file: private key")
    ap.add_argument("--ttfb-ms", help="default time to first byte (ms)")
    ap.add_argument("--gap-ms", help="default gap(s) between writes: MS or MS,MS,...")
    ap.add_argument("--model", help="use the modelled provider timing, scaled: SCALE[,SEED]")
    args = ap.parse_args(argv)
    if bool(args.tls_cert) != bool(args.tls_key):
        print("error: --tls-cert and --tls-key go together", file=sys.stderr)
        return 2
    given = {"ttfb-ms": args.ttfb_ms, "gap-ms": args.gap_ms, "model": args.model}
    knobs = {f"x-sim-{k}": v for k, v in given.items() if v}
    try:
        behavior = from_knobs(Behavior(), knobs)
        tls = None
        if args.tls_cert:
            tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            tls.load_cert_chain(args.tls_cert, args.tls_key)
            tls.set_alpn_protocols(["http/1.1"])
        sim = Simulator(tls=tls, behavior=behavior, port=args.port).start()
    except (UsageError, OSError, ssl.SSLError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(f"listening on {sim.url}", flush=True)
    try:
        while not stop.wait(0.5):
            pass
    finally:
        sim.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
