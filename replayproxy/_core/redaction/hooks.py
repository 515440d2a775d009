"""User callables that edit or drop a recorded interaction before it is written (pure).

VCR.py's ``before_record_request`` and ``before_record_response``, on replayproxy's own types:
``before_record_request(request: Request) -> Request | None`` and
``before_record_response(interaction: Interaction) -> Interaction | None``. Both get what the
redaction left (secrets already replaced, as VCR.py runs its filters before the user's
callable); both are frozen dataclasses, so a callable returns ``dataclasses.replace(...)``.
``None`` drops the interaction: it is not written to the cassette (the client still got its
response). They exist only in-process (the pytest plugin, ``use_cassette``), never in the CLI.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

from replayproxy._core.cassette.model import Interaction, Request
from replayproxy._errors import CassetteError, UsageError

__all__ = ["RecordHooks", "RequestHook", "ResponseHook"]

RequestHook = Callable[[Request], Request | None]
ResponseHook = Callable[[Interaction], Interaction | None]

_T = TypeVar("_T", Request, Interaction)


@dataclass(frozen=True, slots=True)
class RecordHooks:
    """The callables run on each interaction before it is written (none by default)."""

    before_record_request: RequestHook | None = None
    before_record_response: ResponseHook | None = None

    def __post_init__(self) -> None:
        for name in ("before_record_request", "before_record_response"):
            hook = getattr(self, name)
            if hook is not None and not callable(hook):
                raise UsageError(f"{name} must be a callable or None, got {hook!r}")

    def apply(self, interaction: Interaction) -> Interaction | None:
        """``interaction`` as the callables leave it, or ``None`` if one dropped it.

        A callable that raises, or returns something else than the type it got, is a one-line
        :class:`~replayproxy._errors.CassetteError` naming it (the interaction is then not
        written: what it would have held is unknown).
        """
        if self.before_record_request is not None:
            request = _called(self.before_record_request, interaction.request, Request)
            if request is None:
                return None
            interaction = replace(interaction, request=request)
        if self.before_record_response is not None:
            return _called(self.before_record_response, interaction, Interaction)
        return interaction


def _called(hook: Callable[[_T], _T | None], value: _T, kind: type[_T]) -> _T | None:
    name = getattr(hook, "__qualname__", repr(hook))
    try:
        out = hook(value)
    except Exception as e:
        raise CassetteError(
            f"{name} raised {type(e).__name__}: {e}; the interaction was not recorded"
        ) from None
    if out is not None and not isinstance(out, kind):
        raise CassetteError(
            f"{name} returned {type(out).__name__}, not {kind.__name__} or None; "
            "the interaction was not recorded"
        )
    return out
