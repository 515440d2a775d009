"""What a client did with one stream, decided against the stream's own reading.

A reader gathers what the client delivered into a :class:`Delivered` (or the exception it
raised); :func:`judge` compares that with the :class:`~.truth.Reading` of the payloads and
gives the :class:`ClientOutcome`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

from tests.check.oracle.truth import Reading, canonical_args

__all__ = ["FAILURES", "ClientOutcome", "Delivered", "canonical_args", "judge", "raised"]

Status = Literal["fine", "raised", "dropped", "misreported-end"]
FAILURES = ("raised", "dropped", "misreported-end")


@dataclass(frozen=True, slots=True)
class ClientOutcome:
    """One client read of one stream: ``status`` is ``fine``, ``raised`` (the exception's type
    and message in ``detail``), ``dropped`` (data in the stream the client did not deliver) or
    ``misreported-end`` (its finish reason or completion state differs from the stream's)."""

    client: str
    way: str
    status: Status
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.status != "fine"

    def __str__(self) -> str:
        tail = f": {self.detail}" if self.detail else ""
        return f"{self.client} {self.way} {self.status}{tail}"


@dataclass(frozen=True, slots=True)
class Delivered:
    """What a client handed the application. ``None`` in a field means the way of reading has
    no such thing to compare (plain iteration gives no usage object, for one)."""

    text: str | None = None
    tool_args: tuple[str, ...] | None = None
    usage: int | None = None
    has_usage: bool = True
    finish: str | None = None
    has_finish: bool = True
    role: str | None = None  # the message role handed over (None: this way gives none)


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def raised(client: str, way: str, error: BaseException) -> ClientOutcome:
    message = " ".join(str(error).split())[:160]
    name = getattr(error, "type_name", type(error).__name__)  # a Node error's JS class
    return ClientOutcome(client, way, "raised", f"{name}: {message}")


def judge(client: str, way: str, truth: Reading, got: Delivered) -> ClientOutcome:
    """The outcome of a read that ended without an exception."""

    def out(status: Status, detail: str) -> ClientOutcome:
        return ClientOutcome(client, way, status, detail)

    # Text is dropped when the stream's text is not all there; a client that adds text the
    # stream gives in another block (a compaction summary) has not dropped any.
    if got.text is not None and truth.text not in got.text:
        return out("dropped", f"text {_short(got.text)} != stream's {_short(truth.text)}")
    # Likewise tool calls: dropped when one of the stream's is missing; a client that also
    # hands over a built-in tool's call (local_shell) as a tool call has dropped nothing.
    if got.tool_args is not None and Counter(truth.tool_args) - Counter(got.tool_args):
        return out(
            "dropped", f"tool arguments {_short(got.tool_args)} != {_short(truth.tool_args)}"
        )
    if got.role is not None and truth.role is not None and got.role != truth.role:
        return out("dropped", f"role {_short(got.role)} != stream's {truth.role!r}")
    if got.has_usage and truth.usage is not None and got.usage != truth.usage:
        return out("dropped", f"usage {got.usage} != stream's {truth.usage}")
    if truth.error is not None:
        # (an exception on such a stream counts as reporting it: see run.outcome)
        if got.has_finish and got.finish and got.finish == truth.finish:
            return out("fine", "reported the stream's error as its failed status")
        return out("misreported-end", f"the stream's error ({truth.error}) was not reported")
    if not truth.complete:
        return out("misreported-end", "stream cut before its end; the client ended normally")
    if got.has_finish and got.finish not in (truth.finish, truth.blocked or truth.finish):
        return out("misreported-end", f"finish {got.finish!r} != stream's {truth.finish!r}")
    return out("fine", "")
