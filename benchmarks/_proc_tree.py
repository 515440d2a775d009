"""Peak resident memory of a process *tree* (a proxy and its children), sampled while it runs.

``VmHWM`` is per process and only grows, so it cannot tell one benchmark row from the next;
forward replay is also two processes (mitmproxy and the origin child). :class:`TreeRss`
samples the summed ``VmRSS`` of a PID and all its descendants every 20 ms in a thread and
keeps the peak of the sum over one measurement (``with TreeRss(pid) as m: ...; m.peak_mib``),
and how that peak split between the processes (``m.split_mib``: the root first).
"""

from __future__ import annotations

import threading
from pathlib import Path
from types import TracebackType

__all__ = ["TreeRss", "tree_pids", "tree_rss_kib"]


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            out.extend(int(p) for p in (task / "children").read_text().split())
        except OSError:
            continue
    return out


def tree_pids(pid: int) -> list[int]:
    """``pid`` and every descendant alive now."""
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.append(p)
        todo.extend(_children(p))
    return seen


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_kib(pid: int) -> int:
    """Summed resident memory of the tree rooted at ``pid`` now, KiB."""
    return sum(_rss_kib(p) for p in tree_pids(pid))


class TreeRss:
    """Samples :func:`tree_rss_kib` of ``pid`` every ``interval`` s while the block runs."""

    def __init__(self, pid: int, interval: float = 0.02) -> None:
        self.pid = pid
        self.interval = interval
        self.peak_kib = 0
        self.split_kib: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        split = [_rss_kib(p) for p in tree_pids(self.pid)]
        if sum(split) > self.peak_kib:
            self.peak_kib, self.split_kib = sum(split), split

    def _run(self) -> None:
        while True:
            self._sample()
            if self._stop.wait(self.interval):
                return

    @property
    def split_mib(self) -> list[float]:
        return [k / 1024 for k in self.split_kib]

    @property
    def peak_mib(self) -> float:
        return self.peak_kib / 1024

    def __enter__(self) -> TreeRss:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
