"""Reading a streaming response into a :class:`~replayproxy.testing._capture.StreamCapture`: the
shell of the capture (the socket and the clock); what the bytes mean is decided by the core
parsers through :func:`~replayproxy.testing._capture_data.parse_frames`.

* :func:`capture_url` sends the request itself; frame times count from just before it is sent.
* :func:`capture_stream` / :func:`acapture_stream` read an ``httpx.Response`` opened with
  ``stream=True`` (``client.stream(...)`` or ``client.send(..., stream=True)``). httpx does not
  expose when the request was sent, so frame times count from the call (the head has already
  arrived by then: the first frame is usually at a few ms).

Each frame is one read that produced bytes, content-decoded as a client sees them (httpx's
``iter_bytes``: a gzip body arrives as the decompressed bytes of each read, a buffering
middleware as one late frame). ``timeout`` (seconds) is the read timeout: the longest wait for
the next read. For a response opened elsewhere it replaces the request's read timeout, which
httpcore reads when the body is first read (``request.extensions["timeout"]``).

How the body ended (``StreamCapture.end``), as the recorder tells it
(:func:`replayproxy._core.replay.assembly.classify_end` on httpx's error message):

==================  ===============================================================
``"complete"``      the body ended with its framing (chunked terminator, the whole
                    Content-Length; a close-delimited body counts as complete at EOF,
                    since HTTP/1.1 gives no other end signal for it)
``"incomplete"``    the server closed the connection short of the framing
                    (``incomplete chunked read``, ``received N bytes, expected M``)
``"reset"``         the connection was reset (ECONNRESET), or another read error
``"timeout"``       no byte arrived for ``timeout`` seconds (the server hangs)
==================  ===============================================================

``closed_after_terminal``: ``None`` when no terminal event is known for the stream (give
``terminal=`` event types, a ``contract=`` or a ``provider=``; else the provider is detected
from the URL and content type) or none arrived; otherwise whether the body ended (the server
finished the response: chunked terminator, or closed) within ``timeout`` of the last terminal
event's frame, rather than the read timing out.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from replayproxy._core.cassette.model import EndKind
from replayproxy._core.check import Contract
from replayproxy._core.replay.assembly import classify_end
from replayproxy.testing._capture import StreamCapture
from replayproxy.testing._capture_data import CapturedFrame, parse_frames, terminal_for

__all__ = ["DEFAULT_TIMEOUT", "acapture_stream", "capture_stream", "capture_url"]

DEFAULT_TIMEOUT = 5.0
"""Seconds to wait for the next read before the capture ends as ``"timeout"``."""

TerminalArg = str | Sequence[str] | None
ContractArg = Contract | str | os.PathLike[str] | None


def _end_of(error: Exception) -> str:
    if isinstance(error, httpx.TimeoutException):
        return "timeout"
    kind = classify_end(f"{type(error).__name__}: {error}", got_response=True)
    return "incomplete" if kind is EndKind.INCOMPLETE else "reset"


def _set_read_timeout(response: httpx.Response, timeout: float) -> None:
    extensions = response.request.extensions
    timeouts = dict(extensions.get("timeout") or {})
    timeouts["read"] = timeout
    extensions["timeout"] = timeouts


def _ms(start: int) -> float:
    return (time.monotonic_ns() - start) / 1_000_000


def _contract(contract: ContractArg) -> Contract | None:
    if contract is None or isinstance(contract, Contract):
        return contract
    from replayproxy.checking import load_contract

    return load_contract(contract)


def _build(
    response: httpx.Response,
    frames: list[CapturedFrame],
    end: str,
    ended_ms: float,
    timeout: float,
    *,
    terminal: TerminalArg,
    provider: str | None,
    contract: ContractArg,
) -> StreamCapture:
    url = str(response.request.url)
    content_type = response.headers.get("content-type", "")
    events, trailing = parse_frames(frames, content_type)
    which = terminal_for(
        terminal=terminal,
        provider=provider,
        contract=_contract(contract),
        url=url,
        content_type=content_type,
    )
    closed: bool | None = None
    last = [ev for ev in events if which.matches(ev)] if which else []
    if last:
        waited_ms = ended_ms - last[-1].at_ms
        closed = end != "timeout" and waited_ms <= timeout * 1000
    return StreamCapture(
        method=response.request.method,
        url=url,
        status=response.status_code,
        headers=response.headers,
        frames=tuple(frames),
        events=events,
        trailing=trailing,
        end=end,
        closed_after_terminal=closed,
    )


def capture_stream(
    response: httpx.Response,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    terminal: TerminalArg = None,
    provider: str | None = None,
    contract: ContractArg = None,
) -> StreamCapture:
    """Read ``response`` (sync, ``stream=True``) to its end and return its capture; closes it."""
    return _read(
        response,
        time.monotonic_ns(),
        timeout,
        terminal=terminal,
        provider=provider,
        contract=contract,
    )


def _read(
    response: httpx.Response,
    start: int,
    timeout: float,
    *,
    terminal: TerminalArg,
    provider: str | None,
    contract: ContractArg,
) -> StreamCapture:
    _set_read_timeout(response, timeout)
    frames: list[CapturedFrame] = []
    end = "complete"
    try:
        for data in response.iter_bytes():
            frames.append(CapturedFrame(_ms(start), data))
    except (httpx.TransportError, httpx.DecodingError) as error:
        end = _end_of(error)
    finally:
        response.close()
    return _build(
        response,
        frames,
        end,
        _ms(start),
        timeout,
        terminal=terminal,
        provider=provider,
        contract=contract,
    )


async def acapture_stream(
    response: httpx.Response,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    terminal: TerminalArg = None,
    provider: str | None = None,
    contract: ContractArg = None,
) -> StreamCapture:
    """Read ``response`` (async, ``stream=True``) to its end and return its capture; closes it."""
    return await _aread(
        response,
        time.monotonic_ns(),
        timeout,
        terminal=terminal,
        provider=provider,
        contract=contract,
    )


async def _aread(
    response: httpx.Response,
    start: int,
    timeout: float,
    *,
    terminal: TerminalArg,
    provider: str | None,
    contract: ContractArg,
) -> StreamCapture:
    _set_read_timeout(response, timeout)
    frames: list[CapturedFrame] = []
    end = "complete"
    try:
        async for data in response.aiter_bytes():
            frames.append(CapturedFrame(_ms(start), data))
    except (httpx.TransportError, httpx.DecodingError) as error:
        end = _end_of(error)
    finally:
        await response.aclose()
    return _build(
        response,
        frames,
        end,
        _ms(start),
        timeout,
        terminal=terminal,
        provider=provider,
        contract=contract,
    )


def capture_url(
    method: str,
    url: str,
    *,
    json: Any = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    terminal: TerminalArg = None,
    provider: str | None = None,
    contract: ContractArg = None,
) -> StreamCapture:
    """Send ``method url`` (with an optional JSON body and headers) and capture the response;
    frame times count from just before the request is sent. ``timeout`` also bounds the
    connect and the wait for the head."""
    with httpx.Client(timeout=timeout) as client:
        request = client.build_request(method, url, json=json, headers=headers)
        start = time.monotonic_ns()
        response = client.send(request, stream=True)
        return _read(
            response, start, timeout, terminal=terminal, provider=provider, contract=contract
        )


async def acapture_url(
    method: str,
    url: str,
    *,
    json: Any = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    terminal: TerminalArg = None,
    provider: str | None = None,
    contract: ContractArg = None,
) -> StreamCapture:
    """:func:`capture_url` for async tests: the same capture, read without blocking the loop
    (so an endpoint served on the test's own loop keeps running)."""
    async with httpx.AsyncClient(timeout=timeout) as client:
        request = client.build_request(method, url, json=json, headers=headers)
        start = time.monotonic_ns()
        response = await client.send(request, stream=True)
        return await _aread(
            response, start, timeout, terminal=terminal, provider=provider, contract=contract
        )
