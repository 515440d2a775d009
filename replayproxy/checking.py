"""Check recorded or captured streams against each provider's stream contract.

The user-facing side of :mod:`replayproxy.core.check`::

    from replayproxy.checking import check, assert_stream_ok

    violations = check(body, provider="anthropic")          # raw bytes
    violations = check(frames, provider="openai-chat")      # an iterable of byte chunks
    violations = check(interaction)                         # provider detected from the request
    assert_stream_ok(interaction)                           # AssertionError listing violations

    for report in check_cassette("session.cassette"):      # every interaction of a cassette
        print(report.index, report.provider, report.violations)

Interactions are checked *as replayed*: the faults stored in the interaction (and any given
with ``faults=``) are applied first, through the same :func:`replayproxy.core.faults.plan` the
replay server uses, so a cassette edited to drop or truncate events fails with the rule that
fault breaks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from replayproxy.core import faults as fault_core
from replayproxy.core.check import (
    RequestOptions,
    StreamChecker,
    Violation,
    detect,
    request_options,
)
from replayproxy.core.check.realtime import WS_PROVIDERS, check_session, detect_ws
from replayproxy.core.faults import FaultSpec
from replayproxy.core.faults import websocket as ws_faults
from replayproxy.core.model import Cassette, Interaction, header_value
from replayproxy.errors import UsageError

__all__ = [
    "InteractionReport",
    "StreamContractError",
    "assert_stream_ok",
    "check",
    "check_cassette",
    "check_interaction",
]

Source = bytes | bytearray | memoryview | Interaction | Iterable[bytes]


class StreamContractError(AssertionError):
    """A stream broke its provider's contract; the message lists every violation."""

    def __init__(self, violations: Sequence[Violation]) -> None:
        self.violations = tuple(violations)
        lines = [f"stream contract violated ({len(self.violations)} violation(s)):"]
        lines += [f"  {v}" for v in self.violations]
        super().__init__("\n".join(lines))


@dataclass(frozen=True, slots=True)
class InteractionReport:
    """The check of one interaction: its violations, or why it was skipped."""

    index: int
    method: str
    url: str
    provider: str | None
    violations: tuple[Violation, ...] = ()
    skipped: str | None = None  # why it was not checked (not a stream, no response, ...)

    @property
    def errors(self) -> list[Violation]:
        return [v for v in self.violations if v.severity == "error"]

    @property
    def warnings(self) -> list[Violation]:
        return [v for v in self.violations if v.severity == "warning"]


def _request_headers(interaction: Interaction) -> dict[str, str]:
    return {k.decode("latin-1"): v.decode("latin-1") for k, v in interaction.request.headers}


def check_interaction(
    interaction: Interaction,
    index: int = 0,
    *,
    provider: str | None = None,
    faults: Sequence[str] = (),
) -> InteractionReport:
    """Check one interaction as it is replayed (stored faults and ``faults`` applied)."""
    req = interaction.request
    specs = [fault_core.parse(f) for f in faults]
    if interaction.websocket is not None:
        return _check_websocket(interaction, index, provider, specs)
    # Real speed: time-based faults such as keepalive add bytes only where real gaps are.
    schedule = fault_core.plan(interaction, index, speed=1.0, faults=specs)
    base = InteractionReport(index, req.method, req.url, provider)
    if schedule.head is None:
        return _skip(base, "no response")
    content_type = header_value(schedule.head.headers, "content-type")
    if schedule.head.status != 200:
        return _skip(base, f"HTTP {schedule.head.status}: an error response, not a stream")
    name = provider or detect(
        req.url, content_type=content_type, request_headers=_request_headers(interaction)
    )
    if name is None:
        return _skip(base, f"{content_type or 'no content type'}: not an event stream")
    checker = StreamChecker(
        name,
        request=request_options(req.body),
        content_type=None if provider is None else content_type,
    )
    for write in schedule.writes:
        checker.feed(write.data)
    checker.close()
    return InteractionReport(
        index, req.method, req.url, checker.provider, tuple(checker.violations)
    )


def _check_websocket(
    interaction: Interaction, index: int, provider: str | None, specs: Sequence[FaultSpec]
) -> InteractionReport:
    """A WebSocket session: its server messages against the Realtime / Gemini Live grammar."""
    req = interaction.request
    base = InteractionReport(index, req.method, req.url, provider)
    name = provider if provider in WS_PROVIDERS else detect_ws(req.url)
    if name is None:
        return _skip(base, "a WebSocket session of an API without a grammar here")
    planned = ws_faults.plan(interaction, index, faults=specs)
    if planned is None:
        return _skip(base, "the upgrade is refused (status fault): no session")
    violations = check_session(planned[0], name)
    return InteractionReport(index, req.method, req.url, name, tuple(violations))


def _skip(report: InteractionReport, reason: str) -> InteractionReport:
    return InteractionReport(report.index, report.method, report.url, None, (), reason)


def check_cassette(
    cassette: Cassette | str | os.PathLike[str],
    *,
    provider: str | None = None,
    faults: Sequence[str] = (),
    on_warning: Callable[[str], None] | None = None,
) -> list[InteractionReport]:
    """Check every interaction of a cassette (a path is loaded with ``store.load``, which
    reports a torn tail through ``on_warning``)."""
    if not isinstance(cassette, Cassette):
        from replayproxy import store

        cassette = store.load(cassette, on_warning=on_warning)
    return [
        check_interaction(interaction, i, provider=provider, faults=faults)
        for i, interaction in enumerate(cassette.interactions)
    ]


def check(
    source: Source,
    *,
    provider: str | None = None,
    url: str | None = None,
    content_type: str | None = None,
    request: bytes | RequestOptions | None = None,
    faults: Sequence[str] = (),
) -> list[Violation]:
    """The violations of one stream.

    ``source`` is the body (bytes), its frames (an iterable of bytes: any split gives the same
    result) or an :class:`Interaction` (provider detected from its request unless given, faults
    applied). For bytes and frames, give ``provider`` or a ``url`` (and ``content_type``) to
    detect it from; ``request`` is the JSON request body (for ``stream_options.include_usage``).
    Raises :class:`UsageError` when the provider cannot be told or the interaction is no stream.
    """
    if isinstance(source, Interaction):
        report = check_interaction(source, provider=provider, faults=faults)
        if report.skipped is not None:
            raise UsageError(f"cannot check this interaction: {report.skipped}")
        return list(report.violations)
    name = provider or detect(url, content_type=content_type)
    if name is None:
        raise UsageError(
            "cannot tell which provider's contract applies; pass provider= (one of "
            "openai-chat, openai-responses, anthropic, gemini, bedrock-converse, bedrock-invoke, "
            "sse) or the request url="
        )
    options = request if isinstance(request, RequestOptions) else request_options(request)
    checker = StreamChecker(name, request=options, content_type=content_type)
    frames = [bytes(source)] if isinstance(source, bytes | bytearray | memoryview) else source
    for frame in frames:
        checker.feed(frame)
    checker.close()
    return checker.violations


def assert_stream_ok(source: Source, *, allow_warnings: bool = True, **kwargs: object) -> None:
    """Raise :class:`StreamContractError` (an ``AssertionError``) listing the violations of
    ``source`` (errors, and warnings too unless ``allow_warnings``). Takes :func:`check`'s
    keyword arguments."""
    violations = check(source, **kwargs)  # type: ignore[arg-type]
    failing = [v for v in violations if v.severity == "error" or not allow_warnings]
    if failing:
        raise StreamContractError(failing)
