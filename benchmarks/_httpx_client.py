"""Benchmark client of the second shape: httpx streaming clients, all in one asyncio process.

Where :mod:`_client` reads raw sockets one ``recv`` at a time over several processes, this is
what an application does: one ``httpx.AsyncClient`` going through the proxy under test
(``proxy=``), ``client.stream(...)`` per request and ``aiter_raw()`` over the body. Each
chunk httpx yields is timestamped (``time.monotonic_ns``, the clock :mod:`_client` uses), so
the same :func:`_stats.analyse` turns the reads into gap and first-event errors. httpx's own
per-chunk work is part of what this shape measures, which is the point of having both.

Entry point :func:`run_streams` takes and returns picklable values (run in a pool worker).
"""

from __future__ import annotations

import asyncio
import gc
import ssl
import time

import httpx
from _client import StreamResult

__all__ = ["run_streams"]


async def _one(
    client: httpx.AsyncClient, name: str, url: str, body: bytes, at_ns: int
) -> StreamResult:
    result = StreamResult(name, None)
    delay = (at_ns - time.monotonic_ns()) / 1e9
    if delay > 0:
        await asyncio.sleep(delay)
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    try:
        result.t_send = time.monotonic_ns()
        async with client.stream("POST", url, content=body, headers=headers) as r:
            result.t_head = time.monotonic_ns()
            result.status = r.status_code
            async for chunk in r.aiter_raw():
                if chunk:
                    result.reads.append((time.monotonic_ns(), len(chunk)))
        if result.status != 200:
            result.error = f"HTTP {result.status}"
    except httpx.HTTPError as e:
        result.error = f"{type(e).__name__}: {e}"
    return result


async def _run(
    proxy: str, jobs: list[tuple[str, str, bytes, int]], timeout: float, ca: str | None
) -> list[StreamResult]:
    limits = httpx.Limits(max_connections=len(jobs) + 8, max_keepalive_connections=len(jobs))
    verify: ssl.SSLContext | bool = True if ca is None else ssl.create_default_context(cafile=ca)
    async with httpx.AsyncClient(
        proxy=proxy,
        limits=limits,
        timeout=httpx.Timeout(timeout),
        trust_env=False,
        verify=verify,
    ) as client:
        return list(await asyncio.gather(*(_one(client, *job) for job in jobs)))


def run_streams(
    proxy: str, jobs: list[tuple[str, str, bytes, int]], timeout: float, ca: str | None = None
) -> list[StreamResult]:
    """Run every job ``(stream name, url, body, start_at_ns)`` concurrently through ``proxy``
    (``ca``: the CA to verify ``https://`` URLs with: the proxy's).

    The cyclic collector is off while the streams run, as in :func:`_client.run_streams`: a
    collection is a pause in the client, which would be charged to the proxy under test.
    """
    gc.collect()
    gc.disable()
    try:
        return asyncio.run(_run(proxy, jobs, timeout, ca))
    finally:
        gc.enable()
