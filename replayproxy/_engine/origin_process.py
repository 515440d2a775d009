"""The replay origin in its own process, for the CLI's mitmproxy shell.

Behind mitmproxy, every replayed chunk costs mitmproxy's loop a read, a parse and a write.
With the origin on that same loop its timers wait behind that work; in a child process they
fire on time and mitmproxy has its process to itself, as plain ``mitmdump`` in front of a
separate server does. The proxy still matches every request, applies faults and counts the
summary, and hands the child the finished schedule inside the forwarded request
(:mod:`replayproxy._core.schedule.codec`, authenticated by a per-run secret in
:data:`~replayproxy._engine.origin.PACKED_HEADER`). With the cap on absorbed latency
(:data:`~replayproxy._engine.pacing.ABSORB_MAX`) this took the gap error at 200 streams from
1.3-1.5x mitmdump's to 0.5-0.8x; either alone did not (docs/guides/replay.md, "Where the origin
runs"). WebSocket sessions stay on the in-process origin: their replies wait for the client's
messages, which only the proxy sees.

The child (:data:`_BOOT`) reads the secret from the first line of stdin, prints ``PORT <n>``
when it listens on 127.0.0.1, and exits when stdin closes (the parent is gone, however it
ended). It ignores SIGINT: Ctrl-C in a terminal reaches the whole process group, and the
parent decides when the child stops. Schedules with nothing to wait for (``--speed 0``) stay
on the in-process origin: only timers gain from the child.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import signal
import sys
from pathlib import Path

from replayproxy._engine import timers
from replayproxy._engine.origin import Origin
from replayproxy._errors import ReplayProxyError

__all__ = ["OriginProcess", "OriginProcessError", "main"]

START_TIMEOUT = 30.0
"""Seconds the child may take to import and listen (a cold start on a slow CI runner)."""

STOP_TIMEOUT = 5.0
"""Seconds the child may take to stop once stdin closes, before it is killed."""


_BOOT = (
    "import sys; root = sys.argv[1]\n"
    "if root not in sys.path: sys.path.insert(0, root)\n"
    "from replayproxy._engine.origin_process import main; main()"
)
"""The child's entry: it imports the replayproxy the proxy runs (a checkout, a baseline on
PYTHONPATH), whose parent directory is its argument. Installed, that directory is
site-packages, already on sys.path and left where it is (prepending it could let a package
there shadow the standard library)."""


class OriginProcessError(ReplayProxyError):
    """The replay origin process could not start, or is gone."""


class OriginProcess:
    """Start, watch and stop the origin child process (on the proxy's event loop)."""

    def __init__(self) -> None:
        self.secret = secrets.token_hex(16)
        self.port = 0
        self._proc: asyncio.subprocess.Process | None = None

    @property
    def address(self) -> tuple[str, int]:
        return ("127.0.0.1", self.port)

    def exited(self) -> int | None:
        """The child's exit status if it is gone, else ``None``."""
        return None if self._proc is None else self._proc.returncode

    def gone(self) -> OriginProcessError:
        """The error that explains requests the child can no longer serve."""
        return OriginProcessError(
            f"the replay origin process exited (status {self.exited()}); restart the replay"
        )

    async def start(self) -> None:
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-P",  # the current directory stays off sys.path: _BOOT decides where we come from
            "-c",
            _BOOT,
            str(Path(__file__).resolve().parents[2]),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(self.secret.encode() + b"\n")
        try:
            line = await asyncio.wait_for(self._proc.stdout.readline(), START_TIMEOUT)
        except TimeoutError:
            line = b""
        if not line.startswith(b"PORT "):
            await self.close()
            raise OriginProcessError(
                f"the replay origin process did not start (status {self.exited()}); "
                "its error, if any, is above"
            )
        self.port = int(line.split()[1])

    async def close(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()  # the child's signal to stop
        try:
            await asyncio.wait_for(proc.wait(), STOP_TIMEOUT)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()


async def _serve() -> None:
    loop = asyncio.get_running_loop()
    stdin = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    secret = (await stdin.readline()).strip().decode()
    origin = Origin(secret=secret)
    await origin.start()
    sys.stdout.write(f"PORT {origin.port}\n")
    sys.stdout.flush()
    try:
        while await stdin.read(4096):  # until EOF: the parent closed it, or is gone
            pass
    finally:
        await origin.close()


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    timers.run(_serve())


if __name__ == "__main__":
    main()
