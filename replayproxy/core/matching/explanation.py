"""What a miss says: every difference from the nearest recorded request, and the fix (pure).

:class:`Difference` is one way a request differs from a recorded one; :class:`Miss` is the
matcher's answer when nothing can serve a request. :meth:`Miss.explain` is the text users see
(the unmatched 5xx body in the provider's error shape, stderr, a test's failure message),
:meth:`Miss.short` its one-line, header-safe form, :attr:`Miss.options` the command-line options
that would make the nearest recorded request match. :mod:`replayproxy.core.matching.differences`
finds the differences, :mod:`replayproxy.core.matching.matcher` builds the miss and re-exports
both.
"""

from __future__ import annotations

from dataclasses import dataclass

from replayproxy.core.matching.known_clients import note_for

__all__ = ["Difference", "Miss"]


@dataclass(frozen=True, slots=True)
class Difference:
    """One way a request differs from a recorded one (``part`` is host/method/path/query/body).

    ``option`` is the command-line option that would let this difference pass (``None`` when
    no option can: a different method or path); ``compared`` is false for a difference shown
    only to help (the host, when ``match_host`` is off).
    """

    part: str
    recorded: str
    requested: str
    pointer: str | None = None
    option: str | None = None
    compared: bool = True

    def __str__(self) -> str:
        where = self.part if self.pointer is None else f"body at {self.pointer or '/'}"
        text = f"{where}: recorded {self.recorded}, requested {self.requested}"
        return text if self.compared else text + " (not compared without --match-host)"


_LISTED = 20
"""At most this many differences are listed one per line; the rest are counted."""


@dataclass(frozen=True, slots=True)
class Miss:
    """No recorded interaction is available; ``nearest`` and ``differences`` say why.

    ``differences`` lists every difference from the nearest recorded interaction, ranked (host,
    method, path, query, body members in document order); :meth:`explain` is the full text
    (the 5xx body, stderr, a test's failure message), :meth:`short` one header-safe line.
    """

    request: str
    nearest: int | None
    differences: tuple[Difference, ...]
    used_up: bool = False
    reason: str = ""
    """Set when the request matched but could not be served (e.g. a fault that cannot apply)."""
    host: str = ""
    """The host the request was sent to (shown, though matching ignores it by default)."""

    @property
    def options(self) -> tuple[str, ...]:
        """The command-line options that would make the nearest interaction match (may be
        empty, or not enough: see :attr:`fixable`)."""
        seen: dict[str, None] = {}
        for d in self.differences:
            if d.compared and d.option is not None:
                seen.setdefault(d.option, None)
        return tuple(seen)

    @property
    def fixable(self) -> bool:
        """Whether :attr:`options` alone would make the nearest interaction match."""
        return bool(self.differences) and all(
            d.option is not None for d in self.differences if d.compared
        )

    def _target(self) -> str:
        return f"{self.request} (host {self.host})" if self.host else self.request

    def explain(self) -> str:
        """A multi-line, human-readable explanation (the unmatched response's message)."""
        lines = [f"replayproxy: no recorded interaction matches {self._target()}"]
        if self.reason:
            lines[0] = f"replayproxy: cannot serve {self._target()} (recorded #{self.nearest})"
            lines.append(self.reason)
        elif self.nearest is None:
            lines.append("the cassette holds no interactions")
        elif self.used_up:
            lines.append(
                f"it matches recorded interaction #{self.nearest}, but every matching "
                "interaction was already replayed: each recording is served once per run "
                "(restart replayproxy, or pass --allow-repeats to serve the last again)"
            )
        else:
            n = len(self.differences)
            lines.append(
                f"closest recorded interaction: #{self.nearest}, which differs in "
                f"{n} {'place' if n == 1 else 'places'}:"
            )
            lines.extend(f"  {d}" for d in self.differences[:_LISTED])
            if n > _LISTED:
                lines.append(f"  ... and {n - _LISTED} more")
            lines.extend(self._advice())
        note = note_for(self.request)  # a request a known client sends by itself: how to stop it
        if note is not None:
            lines.append(note)
        return "\n".join(lines)

    def _advice(self) -> list[str]:
        options = self.options
        fixed = [d for d in self.differences if d.compared and d.option is None]
        out = []
        if options:
            verb = "to match it, add" if not fixed else "these options clear the other differences"
            out.append(f"{verb}: {' '.join(options)}")
        if any(d.part == "host" for d in fixed):
            out.append("the host is compared because of --match-host; leave it out to ignore it")
        parts = [p for p in ("method", "path", "body") if any(d.part == p for d in fixed)]
        if parts:
            named = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} or {parts[-1]}"
            out.append(
                f"no option makes a different {named} match: record this request "
                "(replayproxy record --append CASSETTE)"
            )
        return out

    def short(self, limit: int = 400) -> str:
        """One ASCII line for a response header: the nearest interaction, what differs, the fix."""
        if self.reason or self.nearest is None or self.used_up:
            text = self.one_line()
        else:
            where = ", ".join(d.pointer if d.pointer else d.part for d in self.differences)
            text = f"nearest #{self.nearest} differs in {where}"
            if self.options:
                text += f"; add {' '.join(self.options)}"
        text = text.encode("ascii", "backslashreplace").decode("ascii")
        text = "".join(c if c.isprintable() else " " for c in text)
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def one_line(self) -> str:
        """A one-line summary, for stderr."""
        if self.reason:
            return f"cannot serve {self._target()} (#{self.nearest}): {self.reason}"
        if self.nearest is None:
            return f"unmatched {self._target()}: the cassette is empty"
        if self.used_up:
            return (
                f"unmatched {self._target()}: #{self.nearest} matches but was used up "
                "(restart, or --allow-repeats)"
            )
        diffs = "; ".join(str(d) for d in self.differences[:_LISTED])
        more = (
            f"; ... and {len(self.differences) - _LISTED} more"
            if len(self.differences) > _LISTED
            else ""
        )
        fix = f" (add {' '.join(self.options)})" if self.options else ""
        return f"unmatched {self._target()}: nearest #{self.nearest} differs in {diffs}{more}{fix}"
