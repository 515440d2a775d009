"""What a miss says: every difference from the nearest recorded request, and the fix (pure).

:class:`Difference` is one way a request differs from a recorded one; :class:`Miss` is the
matcher's answer when nothing can serve a request. :meth:`Miss.explain` is the text users see
(the unmatched 5xx body in the provider's error shape, stderr, a test's failure message),
:meth:`Miss.short` its one-line, header-safe form, :attr:`Miss.options` the command-line options
that would make the nearest recorded request match. :mod:`replayproxy._core.matching.differences`
finds the differences, :mod:`replayproxy._core.matching.matcher` builds the miss and re-exports
both.

The fix is said in the words of where the explanation is read (:class:`Words`, data passed to
:meth:`Miss.explain`): a CLI flag on the command line (:data:`CLI_WORDS`, the default), the
marker keyword and the ``--replayproxy-...`` option inside pytest (:func:`pytest_words`), the
keyword argument of ``use_cassette()`` (:data:`PYTHON_WORDS`) or of ``ReplayServer``
(:data:`SERVER_WORDS`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from urllib.parse import unquote

from replayproxy._core.json.pointer import unescape_tokens
from replayproxy._core.matching.known_clients import note_for
from replayproxy._core.redaction.secrets import (
    REDACTED_TEXT,
    is_secret_name,
    redact_url,
    secret_query_names,
)
from replayproxy._core.redaction.shown import hidden_at, mask_json_text

__all__ = [
    "CLI_WORDS",
    "PYTHON_WORDS",
    "SERVER_WORDS",
    "Difference",
    "Miss",
    "Words",
    "pytest_words",
]


@dataclass(frozen=True, slots=True)
class Difference:
    """One way a request differs from a recorded one (``part`` is host/method/path/query/body).

    ``option`` is the option table's name of the option that would let this difference pass
    (``ignore_body_field``; ``None`` when no option can: a different method or path), ``value``
    its value (``/messages/0/content``; ``None`` for a switch); ``compared`` is false for a
    difference matching does not look at (the host, when ``match_host`` is off): explanations
    leave it out.
    """

    part: str
    recorded: str
    requested: str
    pointer: str | None = None
    option: str | None = None
    compared: bool = True
    value: str | None = None

    def __str__(self) -> str:
        where = self.part if self.pointer is None else f"body at {self.pointer or '/'}"
        return f"{where}: recorded {self.recorded}, requested {self.requested}"

    def shown(self, hidden: Sequence[tuple[str, ...]] = ()) -> Difference:
        """This difference as an explanation prints it: no value of a secret. A body member
        named like a secret, or at, under or above a pointer of ``hidden`` (the redacted
        fields), shows ``<redacted>``; members so named inside a quoted object too; a query
        parameter named like a secret shows ``name=<redacted>``
        (:mod:`replayproxy._core.redaction.shown`)."""
        if self.part == "query" and self.value is not None and is_secret_name(unquote(self.value)):
            return replace(self, recorded=_masked_pairs(self.recorded),
                           requested=_masked_pairs(self.requested))  # fmt: skip
        if self.part != "body" or self.pointer is None:
            return self
        tokens = unescape_tokens(self.pointer) if self.pointer else ()
        if hidden_at(tokens, hidden):
            return replace(self, recorded=_masked(self.recorded), requested=_masked(self.requested))
        return replace(
            self, recorded=mask_json_text(self.recorded), requested=mask_json_text(self.requested)
        )


def _encodable(text: str) -> str:
    """``text`` with lone surrogates escaped (``\\ud800``): JSON may hold them (``"\\ud800"``
    parses to one), UTF-8 may not, and the explanation is written as UTF-8 to stderr and to
    the 500 body."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _masked(text: str) -> str:
    return text if text == "(absent)" else REDACTED_TEXT


def _masked_pairs(text: str) -> str:
    """``a=1&a=2`` (one parameter's values, as a query difference shows them) redacted."""
    if text == "(none)":
        return text
    return "&".join(f"{pair.partition('=')[0]}={REDACTED_TEXT}" for pair in text.split("&"))


Fix = tuple[str, "str | None"]
"""An option that lets a difference pass: its table name and value (``None``: a switch)."""


@dataclass(frozen=True, slots=True)
class Words:
    """How an explanation names what to type, in the words of where it is read (pure data).

    ``flags``: the command-line spelling of an option name (``--`` for the CLI,
    ``--replayproxy-`` in pytest: the option table's ``OptionDef.cli_flag`` /
    ``OptionDef.pytest_flag`` rule), ``separator`` between flag and value; ``call``: a call
    whose keyword arguments take the options (``@pytest.mark.replayproxy({})``), or ``""``;
    ``record``: how to record a request nothing matches; ``cassette``: named when set;
    ``host``: whether the request's host means anything to the reader (not in base-URL mode,
    where it is replayproxy's own address); ``restart``: how to start over with fresh counts.
    """

    flags: str = "--"
    separator: str = " "
    call: str = ""
    record: str = "replayproxy record --append CASSETTE"
    """How to record a request nothing matches (said after "to record it: ")."""
    cassette: str = ""
    host: bool = True
    restart: str = "restart replayproxy"

    def flag(self, fix: Fix) -> str:
        name, value = fix
        flag = self.flags + name.replace("_", "-")
        return flag if value is None else f"{flag}{self.separator}{value}"

    def keywords(self, fixes: tuple[Fix, ...]) -> str:
        """``ignore_body_field=["/a", "/b"], allow_repeats=True``: list options gather."""
        gathered: dict[str, list[str]] = {}
        for name, value in fixes:
            gathered.setdefault(name, [])
            if value is not None:
                gathered[name].append(value)
        return ", ".join(
            f"{name}={json.dumps(values) if values else True}" for name, values in gathered.items()
        )

    def fix(self, fixes: tuple[Fix, ...]) -> str:
        """The options, spelt every way this reader can type them."""
        flags = " ".join(self.flag(f) for f in fixes)
        if not self.call:
            return flags
        call = self.call.format(self.keywords(fixes))
        return call if not self.flags else f"{call}, or {flags}"


CLI_WORDS = Words()
"""The command line: ``--ignore-body-field /messages/0/content``."""

PYTHON_WORDS = Words(
    flags="",
    call="use_cassette(..., {})",
    record="record_mode='new_episodes'",
    restart="start a new use_cassette() block",
)

SERVER_WORDS = Words(
    flags="",
    call="ReplayServer(..., {})",
    record="use_cassette(..., record_mode='new_episodes')",
    host=False,
    restart="start a new ReplayServer",
)
"""``ReplayServer``'s keywords; it serves a base URL, so the request's host is its own."""
"""``use_cassette()``: its keyword arguments."""


def pytest_words(test: str, cassette: str, *, host: bool = True) -> Words:
    """Inside pytest, for the test ``test`` (its node id) and its cassette: the marker keyword
    and the ``--replayproxy-`` option, and the command that re-records this one test."""
    return Words(
        flags="--replayproxy-",
        separator="=",
        call=f"@pytest.mark.{_MARKER}({{}})",
        record=(
            f"pytest '{test}' --replayproxy-record-mode=new_episodes "
            "(or --replayproxy-record-mode=rewrite to record it anew)"
        ),
        cassette=cassette,
        host=host,
        restart="each test starts with fresh counts",
    )


_MARKER = "replayproxy"


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
    hidden: tuple[str, ...] = ()
    """JSON pointers of body fields the session redacts (``--redact-body-field``): their values
    are never printed, nor members named like secrets (:meth:`Difference.shown`)."""

    def hiding(self, pointers: Sequence[str]) -> Miss:
        """This miss, also keeping the values at ``pointers`` out of its text."""
        return replace(self, hidden=(*self.hidden, *pointers)) if pointers else self

    @property
    def fixes(self) -> tuple[Fix, ...]:
        """The options (table name, value) that would make the nearest interaction match (may
        be empty, or not enough: see :attr:`fixable`)."""
        seen: dict[Fix, None] = {}
        for d in self.differences:
            if d.compared and d.option is not None:
                seen.setdefault((d.option, d.value), None)
        return tuple(seen)

    @property
    def options(self) -> tuple[str, ...]:
        """:attr:`fixes` as command-line flags (``--ignore-query b``)."""
        return tuple(_encodable(CLI_WORDS.flag(f)) for f in self.fixes)

    @property
    def fixable(self) -> bool:
        """Whether :attr:`options` alone would make the nearest interaction match."""
        return bool(self.differences) and all(
            d.option is not None for d in self.differences if d.compared
        )

    def _compared(self) -> list[Difference]:
        """The differences matching looks at: the ones an explanation lists."""
        return [d for d in self.differences if d.compared]

    def _shown(self) -> list[Difference]:
        """:meth:`_compared` as printed: without the values of secrets."""
        hidden = [unescape_tokens(p) for p in self.hidden if p.startswith("/")]
        return [d.shown(hidden) for d in self._compared()]

    def _target(self, words: Words = CLI_WORDS) -> str:
        request = redact_url(self.request, secret_query_names(self.request))
        target = f"{request} (host {self.host})" if self.host and words.host else request
        return _encodable(target)

    def explain(self, words: Words = CLI_WORDS) -> str:
        """A multi-line, human-readable explanation (the unmatched response's message), its
        fixes in ``words`` (where it is read: :class:`Words`)."""
        lines = [f"replayproxy: no recorded interaction matches {self._target(words)}"]
        if self.reason:
            lines[0] = f"replayproxy: cannot serve {self._target(words)} (recorded #{self.nearest})"
            lines.append(self.reason)
        elif self.nearest is None:
            lines.append("the cassette holds no interactions")
            if words.cassette:
                lines.append(f"to record it: {words.record}")
        elif self.used_up:
            again = words.fix((("allow_repeats", None),))
            lines.append(
                f"it matches recorded interaction #{self.nearest}, but every matching "
                "interaction was already replayed: each recording is served once per run "
                f"({words.restart}, or pass {again} to serve the last again)"
            )
        else:
            shown = self._shown()
            n = len(shown)
            lines.append(
                f"closest recorded interaction: #{self.nearest}, which differs in "
                f"{n} {'place' if n == 1 else 'places'}:"
            )
            lines.extend(f"  {d}" for d in shown[:_LISTED])
            if n > _LISTED:
                lines.append(f"  ... and {n - _LISTED} more")
            lines.extend(self._advice(words))
        if words.cassette:
            lines.append(f"cassette: {words.cassette}")
        note = note_for(self.request)  # a request a known client sends by itself: how to stop it
        if note is not None:
            lines.append(note)
        return _encodable("\n".join(lines))

    def _advice(self, words: Words) -> list[str]:
        fixes = self.fixes
        fixed = [d for d in self.differences if d.compared and d.option is None]
        out = []
        if fixes:
            verb = "to match it, add" if not fixed else "these options clear the other differences"
            out.append(f"{verb}: {words.fix(fixes)}")
        if any(d.part == "host" for d in fixed):
            out.append(
                f"the host is compared because of {words.fix((('match_host', None),))}; "
                "leave it out to ignore it"
            )
        parts = [p for p in ("method", "path", "body") if any(d.part == p for d in fixed)]
        if parts:
            named = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} or {parts[-1]}"
            out.append(f"no option makes a different {named} match; to record it: {words.record}")
        elif fixes and words.cassette:
            out.append(f"or, to record it: {words.record}")
        return out

    def short(self, limit: int = 400) -> str:
        """One ASCII line for a response header: the nearest interaction, what differs, the fix."""
        if self.reason or self.nearest is None or self.used_up:
            text = self.one_line()
        else:
            where = ", ".join(d.pointer if d.pointer else d.part for d in self._compared())
            text = f"nearest #{self.nearest} differs in {where}"
            if self.options:
                text += f"; add {' '.join(self.options)}"
        text = text.encode("ascii", "backslashreplace").decode("ascii")
        text = "".join(c if c.isprintable() else " " for c in text)
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def one_line(self) -> str:
        """A one-line summary, for stderr."""
        if self.reason:
            return _encodable(f"cannot serve {self._target()} (#{self.nearest}): {self.reason}")
        if self.nearest is None:
            return f"unmatched {self._target()}: the cassette is empty"
        if self.used_up:
            return (
                f"unmatched {self._target()}: #{self.nearest} matches but was used up "
                "(restart, or --allow-repeats)"
            )
        shown = self._shown()
        diffs = "; ".join(str(d) for d in shown[:_LISTED])
        more = f"; ... and {len(shown) - _LISTED} more" if len(shown) > _LISTED else ""
        fix = f" (add {' '.join(self.options)})" if self.options else ""
        return _encodable(
            f"unmatched {self._target()}: nearest #{self.nearest} differs in {diffs}{more}{fix}"
        )
