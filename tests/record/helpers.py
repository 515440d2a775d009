"""Helpers for the recording tests: an embedded recording proxy and cassette/served comparisons."""

from __future__ import annotations

import ssl
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette, Interaction
from replayproxy._mitm.addons.recorder import Recorder
from replayproxy._mitm.embedded import EmbeddedProxy
from replayproxy.testing import Served

# Generous: the machine is shared; what matters is that the schedule's shape is kept.
OFFSET_TOLERANCE_NS = 200_000_000


@contextmanager
def recording(
    path: Path,
    *,
    confdir: Path,
    upstream: str | None = None,
    upstream_ca: Path | None = None,
    **options: Any,
) -> Iterator[EmbeddedProxy]:
    """An embedded proxy recording to ``path``: forward mode, or reverse to ``upstream``.

    Same mitmproxy options as ``replayproxy record`` uses (eager forward, lazy reverse).
    """
    opts: dict[str, Any] = {
        "replayproxy_record": str(path),
        "connection_strategy": "eager" if upstream is None else "lazy",
        **options,
    }
    if upstream_ca is not None:
        opts["ssl_verify_upstream_trusted_ca"] = str(upstream_ca)
    mode = "regular" if upstream is None else f"reverse:{upstream}"
    with EmbeddedProxy([Recorder()], mode=mode, confdir=confdir, options=opts) as proxy:
        yield proxy


def client_and_base(proxy: EmbeddedProxy, upstream_url: str, forward: bool) -> tuple[Any, str]:
    """An httpx client set up for the proxy, and the base URL it should request."""
    if forward:
        verify = ssl.create_default_context(cafile=str(proxy.ca_cert))
        return httpx.Client(proxy=proxy.url, verify=verify, timeout=10), upstream_url
    return httpx.Client(timeout=10), proxy.url


def load_quiet(path: Path) -> Cassette:
    """Load a cassette, failing on any warning (a torn tail would be one)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return store.load(path)


def wait_for_interactions(path: Path, n: int, timeout: float = 5.0) -> Cassette:
    """Poll until the cassette file holds at least ``n`` interactions."""
    deadline = time.monotonic() + timeout
    while True:
        cassette = load_quiet(path) if path.exists() else Cassette()
        if len(cassette.interactions) >= n or time.monotonic() > deadline:
            return cassette
        time.sleep(0.02)


def assert_like_served(interaction: Interaction, served: Served) -> None:
    """One frame per simulator write, same bytes, offsets following the writes' schedule."""
    assert interaction.response is not None
    assert interaction.response.status == served.status
    frames = interaction.response.frames
    assert [f.data for f in frames] == [data for _, data in served.writes]
    assert interaction.response.body == served.body
    rec0, sim0 = frames[0].offset_ns, served.writes[0][0]
    for frame, (sim_t, _) in zip(frames, served.writes, strict=True):
        drift = (frame.offset_ns - rec0) - (sim_t - sim0)
        assert abs(drift) < OFFSET_TOLERANCE_NS, (frame.offset_ns, sim_t, drift)
    offsets = [f.offset_ns for f in frames]
    assert offsets == sorted(offsets)
    assert interaction.response.head_offset_ns <= offsets[0]


def head_header_pairs(served: Served) -> list[tuple[bytes, bytes]]:
    """The (name, value) pairs of the simulator's raw response head, in wire order."""
    lines = served.head.split(b"\r\n")[1:]
    pairs = []
    for line in lines:
        if line:
            name, _, value = line.partition(b":")
            pairs.append((name, value.strip()))
    return pairs
