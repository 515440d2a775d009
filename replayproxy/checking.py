"""Check recorded or captured streams against each provider's stream contract.

The user-facing side of :mod:`replayproxy.core.check`::

    from replayproxy.checking import check, assert_stream_ok

    violations = check(body, provider="anthropic")          # raw bytes
    violations = check(frames, provider="openai-chat")      # an iterable of byte chunks
    violations = check(interaction)                         # provider detected from the request
    assert_stream_ok(interaction)                           # AssertionError listing violations

    for report in check_cassette("session.cassette"):      # every interaction of a cassette
        print(report.index, report.provider, report.dialect, report.violations)

    report = check_stream(body, url="https://api.deepseek.com/chat/completions")
    report.dialect, report.notes, report.errors             # "OpenAI-compatible (DeepSeek)"

    contract = load_contract("docs/examples/chat-turn.contract.toml")   # your own API
    violations = check(body, contract=contract)

Interactions are checked *as replayed*: the faults stored in the interaction (and any given
with ``faults=``) are applied first, through the same :func:`replayproxy.core.faults.plan` the
replay server uses, so a cassette edited to drop or truncate events fails with the rule that
fault breaks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from replayproxy.core import faults as fault_core
from replayproxy.core.cassette.model import Cassette, Interaction, header_value
from replayproxy.core.check import (
    PROVIDERS,
    Contract,
    RequestOptions,
    StreamChecker,
    Violation,
    parse_contract,
    request_options,
)
from replayproxy.core.check.grammars.realtime import check_session
from replayproxy.core.faults import FaultSpec
from replayproxy.core.faults import websocket as ws_faults
from replayproxy.core.providers import Provider, detect, parse
from replayproxy.errors import UsageError

__all__ = [
    "InteractionReport",
    "StreamContractError",
    "StreamReport",
    "assert_stream_ok",
    "check",
    "check_cassette",
    "check_interaction",
    "check_stream",
    "load_contract",
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
    dialect: str | None = None  # "OpenAI-compatible (DeepSeek)", "contract chat turn" ...
    notes: tuple[str, ...] = ()  # known provider dialect features (named, not flagged)

    @property
    def errors(self) -> list[Violation]:
        return [v for v in self.violations if v.severity == "error"]

    @property
    def warnings(self) -> list[Violation]:
        return [v for v in self.violations if v.severity == "warning"]


@dataclass(frozen=True, slots=True)
class StreamReport:
    """The check of one stream: its provider family, dialect, dialect notes and violations."""

    provider: str
    dialect: str
    violations: tuple[Violation, ...]
    notes: tuple[str, ...] = ()

    @property
    def errors(self) -> list[Violation]:
        return [v for v in self.violations if v.severity == "error"]

    @property
    def warnings(self) -> list[Violation]:
        return [v for v in self.violations if v.severity == "warning"]


def load_contract(path: str | os.PathLike[str]) -> Contract:
    """Read a contract file: JSON when it ends with ``.json``, TOML otherwise."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise UsageError(f"cannot read contract {str(file)!r}: {reason}") from None
    try:
        if file.suffix.lower() == ".json":
            return parse_contract(text, fmt="json", name=file.name.split(".", 1)[0])
        return parse_contract(text, fmt="toml", name=file.name.split(".", 1)[0])
    except UsageError as e:
        raise UsageError(f"{file}: {e}") from None


def _contract(contract: Contract | str | os.PathLike[str] | None) -> Contract | None:
    if contract is None or isinstance(contract, Contract):
        return contract
    return load_contract(contract)


def check_interaction(
    interaction: Interaction,
    index: int = 0,
    *,
    provider: str | None = None,
    faults: Sequence[str] = (),
    contract: Contract | None = None,
) -> InteractionReport:
    """Check one interaction as it is replayed (stored faults and ``faults`` applied), against
    its provider's contract or the application ``contract``."""
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
    name: str | Provider | Contract | None = contract or provider
    if name is None:
        name = detect(req, content_type, websocket=False)
    if name is None:
        return _skip(base, f"{content_type or 'no content type'}: not an event stream")
    checker = StreamChecker(
        name,
        request=request_options(req.body),
        content_type=None if provider is None and contract is None else content_type,
        url=req.url,
    )
    for write in schedule.writes:
        checker.feed(write.data)
    checker.close()
    return InteractionReport(
        index,
        req.method,
        req.url,
        checker.provider,
        tuple(checker.violations),
        dialect=checker.dialect,
        notes=tuple(checker.notes),
    )


def _check_websocket(
    interaction: Interaction, index: int, provider: str | None, specs: Sequence[FaultSpec]
) -> InteractionReport:
    """A WebSocket session: its server messages against the Realtime / Gemini Live grammar."""
    req = interaction.request
    base = InteractionReport(index, req.method, req.url, provider)
    name = _websocket_provider(provider) or detect(req.url, websocket=True)
    if name is None:
        return _skip(base, "a WebSocket session of an API without a grammar here")
    planned = ws_faults.plan(interaction, index, faults=specs)
    if planned is None:
        return _skip(base, "the upgrade is refused (status fault): no session")
    violations = check_session(planned[0], name)
    return InteractionReport(index, req.method, req.url, name.value, tuple(violations))


def _websocket_provider(name: str | None) -> Provider | None:
    """The WebSocket API ``name`` names, or ``None`` (an HTTP API's name: detect instead)."""
    if name is None:
        return None
    try:
        return parse(name, websocket=True)
    except UsageError:
        return None


def _skip(report: InteractionReport, reason: str) -> InteractionReport:
    return InteractionReport(report.index, report.method, report.url, None, (), reason)


def check_cassette(
    cassette: Cassette | str | os.PathLike[str],
    *,
    provider: str | None = None,
    faults: Sequence[str] = (),
    on_warning: Callable[[str], None] | None = None,
    contract: Contract | str | os.PathLike[str] | None = None,
) -> list[InteractionReport]:
    """Check every interaction of a cassette (a path is loaded with ``store.load``, which
    reports a torn tail through ``on_warning``); ``contract`` checks them as application
    streams instead."""
    app = _contract(contract)
    if not isinstance(cassette, Cassette):
        from replayproxy import store

        cassette = store.load(cassette, on_warning=on_warning)
    return [
        check_interaction(interaction, i, provider=provider, faults=faults, contract=app)
        for i, interaction in enumerate(cassette.interactions)
    ]


def _frames(source: object) -> Iterable[bytes]:
    """The body as frames; a clear usage error for anything that is not bytes."""
    if isinstance(source, bytes | bytearray | memoryview):
        return [bytes(source)]
    if isinstance(source, str):
        raise UsageError(
            "check() takes the body as bytes, not str: pass body.encode() (or read the file "
            "in binary mode, open(path, 'rb'))"
        )
    if not isinstance(source, Iterable):
        raise UsageError(
            f"check() takes bytes, an iterable of bytes frames or an Interaction, not "
            f"{type(source).__name__}"
        )

    def checked() -> Iterable[bytes]:
        for i, frame in enumerate(source):
            if not isinstance(frame, bytes | bytearray | memoryview):
                raise UsageError(
                    f"check(): frame {i} is {type(frame).__name__}, not bytes; every frame "
                    "must be bytes"
                )
            yield bytes(frame)

    return checked()


def _no_provider(url: str | None, content_type: str | None) -> UsageError:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media:
        return UsageError(
            f"content type {content_type!r} is not an event stream (text/event-stream or "
            "application/vnd.amazon.eventstream): nothing to check; pass provider= to check "
            "the body anyway"
        )
    where = f"the URL {url!r}" if url else "nothing (no provider=, url= or content_type=)"
    return UsageError(
        f"cannot tell which provider's contract applies from {where}; pass provider= (one of "
        f"{', '.join(PROVIDERS)}), contract=, or the request url="
    )


def check_stream(
    source: Source,
    *,
    provider: str | None = None,
    contract: Contract | str | os.PathLike[str] | None = None,
    url: str | None = None,
    content_type: str | None = None,
    request: bytes | RequestOptions | None = None,
    faults: Sequence[str] = (),
) -> StreamReport:
    """Check one stream and return a :class:`StreamReport` (dialect, notes, violations).

    ``source`` is the body (bytes), its frames (an iterable of bytes: any split gives the same
    result) or an :class:`Interaction` (provider detected from its request unless given, faults
    applied). For bytes and frames, give ``provider``, an application ``contract`` (a
    :class:`Contract` or a contract file path) or a ``url`` (and ``content_type``) to detect the
    provider from; ``request`` is the JSON request body (for ``stream_options.include_usage``).
    Raises :class:`UsageError` (one line) for a str body, a non-stream content type, an unknown
    provider, or an interaction that is no stream.
    """
    app = _contract(contract)
    if isinstance(source, Interaction):
        report = check_interaction(source, provider=provider, faults=faults, contract=app)
        if report.skipped is not None:
            raise UsageError(f"cannot check this interaction: {report.skipped}")
        return StreamReport(
            report.provider or "", report.dialect or "", report.violations, report.notes
        )
    frames = _frames(source)
    name: str | Provider | Contract | None = (
        app or provider or detect(url, content_type, websocket=False)
    )
    if name is None:
        raise _no_provider(url, content_type)
    options = request if isinstance(request, RequestOptions) else request_options(request)
    checker = StreamChecker(name, request=options, content_type=content_type, url=url)
    for frame in frames:
        checker.feed(frame)
    checker.close()
    return StreamReport(
        checker.provider, checker.dialect, tuple(checker.violations), tuple(checker.notes)
    )


def check(
    source: Source,
    *,
    provider: str | None = None,
    contract: Contract | str | os.PathLike[str] | None = None,
    url: str | None = None,
    content_type: str | None = None,
    request: bytes | RequestOptions | None = None,
    faults: Sequence[str] = (),
) -> list[Violation]:
    """The violations of one stream; takes :func:`check_stream`'s arguments."""
    return list(
        check_stream(
            source,
            provider=provider,
            contract=contract,
            url=url,
            content_type=content_type,
            request=request,
            faults=faults,
        ).violations
    )


def assert_stream_ok(source: Source, *, allow_warnings: bool = True, **kwargs: object) -> None:
    """Raise :class:`StreamContractError` (an ``AssertionError``) listing the violations of
    ``source`` (errors, and warnings too unless ``allow_warnings``). Takes :func:`check`'s
    keyword arguments."""
    violations = check(source, **kwargs)  # type: ignore[arg-type]
    failing = [v for v in violations if v.severity == "error" or not allow_warnings]
    if failing:
        raise StreamContractError(failing)
