"""Check recorded or captured streams against each provider's stream contract.

The user-facing side of :mod:`replayproxy._core.check`::

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
    check(frames, contract=contract, record=turn_row, upstream_incomplete=False)
    check_cassette("app.cassette", contract=contract, path="/chat")   # select interactions

Interactions are checked *as replayed*: the faults stored in the interaction (and any given
with ``faults=``) are applied first, through the same :func:`replayproxy._core.faults.plan` the
replay server uses, so a cassette edited to drop or truncate events fails with the rule that
fault breaks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replayproxy._core.cassette.model import Cassette, Frame, Interaction
from replayproxy._core.check import (
    PROVIDERS,
    Contract,
    RequestOptions,
    StreamChecker,
    Violation,
    feed_frames,
    parse_contract,
    request_options,
)
from replayproxy._core.check.recorded import InteractionReport, check_interaction, select
from replayproxy._core.providers import Provider, detect
from replayproxy._core.wire.content_coding import unsupported
from replayproxy._errors import UsageError

__all__ = [
    "Contract",
    "InteractionReport",
    "StreamChecker",
    "StreamContractError",
    "StreamReport",
    "Violation",
    "assert_stream_ok",
    "check",
    "check_cassette",
    "check_interaction",
    "check_stream",
    "load_contract",
]

Source = bytes | bytearray | memoryview | Interaction | Iterable[bytes] | Iterable[Frame]


class StreamContractError(AssertionError):
    """A stream broke its provider's contract; the message lists every violation."""

    def __init__(self, violations: Sequence[Violation]) -> None:
        self.violations = tuple(violations)
        lines = [f"stream contract violated ({len(self.violations)} violation(s)):"]
        lines += [f"  {v}" for v in self.violations]
        super().__init__("\n".join(lines))


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


def check_cassette(
    cassette: Cassette | str | os.PathLike[str],
    *,
    provider: str | None = None,
    faults: Sequence[str] = (),
    on_warning: Callable[[str], None] | None = None,
    contract: Contract | str | os.PathLike[str] | None = None,
    interactions: Iterable[int] | None = None,
    path: str | None = None,
    record: Mapping[str, Any] | None = None,
    upstream_incomplete: bool = False,
) -> list[InteractionReport]:
    """Check the interactions of a cassette (a path is loaded with ``store.load``, which
    reports a torn tail through ``on_warning``); ``contract`` checks them as application
    streams instead, with ``record`` and ``upstream_incomplete`` as :func:`check_stream` takes
    them. ``interactions`` (indexes) and ``path`` (an ``fnmatch`` glob on the request path, as
    the fault selector ``path=``) select which are checked; the reports keep their indexes."""
    app = _contract(contract)
    name = "the cassette"
    if not isinstance(cassette, Cassette):
        from replayproxy import _store as store

        name = str(cassette)
        cassette = store.load(cassette, on_warning=on_warning)
    return [
        check_interaction(
            interaction,
            i,
            provider=provider,
            faults=faults,
            contract=app,
            record=record,
            upstream_incomplete=upstream_incomplete,
        )
        for i, interaction in select(cassette, interactions=interactions, path=path, name=name)
    ]


def _frames(source: object) -> Iterable[bytes | Frame]:
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

    def checked() -> Iterable[bytes | Frame]:
        for i, frame in enumerate(source):
            if isinstance(frame, Frame):
                yield frame
            elif isinstance(frame, bytes | bytearray | memoryview):
                yield bytes(frame)
            else:
                raise UsageError(
                    f"check(): frame {i} is {type(frame).__name__}, not bytes; every frame "
                    "must be bytes (or a Frame with its arrival offset)"
                )

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
    content_encoding: str | None = None,
    record: Mapping[str, Any] | None = None,
    upstream_incomplete: bool = False,
) -> StreamReport:
    """Check one stream and return a :class:`StreamReport` (dialect, notes, violations).

    ``source`` is the body (bytes), its frames (an iterable of bytes, or of
    :class:`~replayproxy._core.cassette.model.Frame` with their arrival offsets: any split gives
    the same result, the delivery timing of ``incremental`` contracts aside) or an
    :class:`Interaction` (provider detected from its request unless given, faults applied). For
    bytes and frames, give ``provider``, an application ``contract`` (a :class:`Contract` or a
    contract file path) or a ``url`` (and ``content_type``) to detect the provider from;
    ``request`` is the JSON request body (for ``stream_options.include_usage``);
    ``content_encoding`` the response's ``Content-Encoding`` when the bytes are still encoded.
    With a contract, ``record`` is the stored record (a mapping, e.g. the turn's database row)
    that the contract's ``fields.record`` pointers must match, and ``upstream_incomplete`` says
    the provider stream behind this one was cut (``upstream.incomplete`` limits the terminal).
    Raises :class:`UsageError` (one line) for a str body, a non-stream content type, an unknown
    provider or content coding, ``record``/``upstream_incomplete`` without a contract, or an
    interaction that is no stream.
    """
    app = _contract(contract)
    if isinstance(source, Interaction):
        report = check_interaction(
            source,
            provider=provider,
            faults=faults,
            contract=app,
            record=record,
            upstream_incomplete=upstream_incomplete,
        )
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
    reason = unsupported(content_encoding)
    if reason is not None:
        raise UsageError(f"cannot check this body: {reason}")
    options = request if isinstance(request, RequestOptions) else request_options(request)
    checker = StreamChecker(
        name,
        request=options,
        content_type=content_type,
        url=url,
        content_encoding=content_encoding,
        record=record,
        upstream_incomplete=upstream_incomplete,
    )
    feed_frames(checker, frames)
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
    content_encoding: str | None = None,
    record: Mapping[str, Any] | None = None,
    upstream_incomplete: bool = False,
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
            content_encoding=content_encoding,
            record=record,
            upstream_incomplete=upstream_incomplete,
        ).violations
    )


def assert_stream_ok(source: Source, *, allow_warnings: bool = True, **kwargs: object) -> None:
    """Raise :class:`StreamContractError` (an ``AssertionError``) listing the violations of
    ``source`` (errors, and warnings too unless ``allow_warnings``). Takes :func:`check`'s
    keyword arguments (``contract=``, ``record=``, ``upstream_incomplete=`` ...)."""
    violations = check(source, **kwargs)  # type: ignore[arg-type]
    failing = [v for v in violations if v.severity == "error" or not allow_warnings]
    if failing:
        raise StreamContractError(failing)
