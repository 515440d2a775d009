"""The order grammar of a stream contract: a tiny regular language over event types.

    started delta* (committed | rejected)

Names are event types; juxtaposition is sequence, ``|`` alternation, ``*`` ``+`` ``?``
repetition, parentheses group. Names may hold letters, digits and ``_ . - : / [ ]``
(``[DONE]`` is a name); any other name is written in double quotes. The grammar compiles to a
Thompson NFA that is run one event at a time (:class:`OrderMatcher`), so a violation is found
at the first event the grammar cannot take, whatever the byte split. Pure.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from replayproxy._errors import UsageError

__all__ = ["Order", "OrderMatcher", "compile_order"]

_TOKEN = re.compile(r'\s*(?:(?P<name>[A-Za-z0-9_.:/\[\]-]+)|"(?P<quoted>[^"]+)"|(?P<op>[|()*+?]))')


@dataclass(frozen=True, slots=True)
class Order:
    """A compiled order grammar: ``eps[s]`` epsilon edges, ``edges[s]`` labelled edges."""

    source: str
    eps: tuple[tuple[int, ...], ...]
    edges: tuple[tuple[tuple[str, int], ...], ...]
    start: int
    accept: int
    names: frozenset[str]


class _Builder:
    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = self._lex(source)
        self.pos = 0
        self.eps: list[list[int]] = []
        self.edges: list[list[tuple[str, int]]] = []
        self.names: set[str] = set()

    def _lex(self, source: str) -> list[tuple[str, str]]:
        tokens: list[tuple[str, str]] = []
        text = source.rstrip()  # a match is blanks then a token: trailing blanks have none
        at = 0
        while at < len(text):
            m = _TOKEN.match(text, at)
            if m is None:
                bad = len(text) - len(text[at:].lstrip())  # the character, not the blanks
                raise UsageError(
                    f"order {source!r}: unexpected {text[bad]!r} at column {bad + 1}; "
                    'names are letters, digits and _ . - : / [ ] or "quoted"'
                )
            if m.group("op"):
                tokens.append(("op", m.group("op")))
            else:
                tokens.append(("name", m.group("name") or m.group("quoted")))
            at = m.end()
        return tokens

    def state(self) -> int:
        self.eps.append([])
        self.edges.append([])
        return len(self.eps) - 1

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def fail(self, what: str) -> UsageError:
        return UsageError(f"order {self.source!r}: {what}")

    # Each parse method returns a fragment (entry state, exit state).
    def alt(self) -> tuple[int, int]:
        branches = [self.seq()]
        while self.peek() == ("op", "|"):
            self.pos += 1
            branches.append(self.seq())
        if len(branches) == 1:
            return branches[0]
        entry, exit_ = self.state(), self.state()
        for a, b in branches:
            self.eps[entry].append(a)
            self.eps[b].append(exit_)
        return entry, exit_

    def seq(self) -> tuple[int, int]:
        items: list[tuple[int, int]] = []
        while (tok := self.peek()) is not None and tok not in (("op", "|"), ("op", ")")):
            items.append(self.item(tok))
        if not items:
            if self.peek() is None:
                raise self.fail("ends where an event name or '(' was expected")
            raise self.fail("an empty alternative (nothing between '|', '(' or ')')")
        for (_, b), (a, _) in itertools.pairwise(items):
            self.eps[b].append(a)
        return items[0][0], items[-1][1]

    def item(self, tok: tuple[str, str]) -> tuple[int, int]:
        entry, exit_ = self.atom(tok)
        while (op := self.peek()) is not None and op[0] == "op" and op[1] in ("*", "+", "?"):
            self.pos += 1
            new_entry, new_exit = self.state(), self.state()
            self.eps[new_entry].append(entry)
            self.eps[exit_].append(new_exit)
            if op[1] in ("*", "?"):
                self.eps[new_entry].append(new_exit)
            if op[1] in ("*", "+"):
                self.eps[exit_].append(entry)
            entry, exit_ = new_entry, new_exit
        return entry, exit_

    def atom(self, tok: tuple[str, str]) -> tuple[int, int]:
        """The fragment of ``tok`` (the next token) and what it opens."""
        self.pos += 1
        kind, text = tok
        if kind == "name":
            entry, exit_ = self.state(), self.state()
            self.edges[entry].append((text, exit_))
            self.names.add(text)
            return entry, exit_
        if text == "(":
            fragment = self.alt()
            if self.peek() != ("op", ")"):
                raise self.fail("a '(' is not closed")
            self.pos += 1
            return fragment
        raise self.fail(f"unexpected {text!r} where an event name or '(' was expected")


def compile_order(source: str) -> Order:
    """Compile ``source``; raises :class:`UsageError` (one line) when it is malformed."""
    builder = _Builder(source)
    if not builder.tokens:
        raise UsageError("order is empty; write e.g. 'started delta* (committed | rejected)'")
    start, accept = builder.alt()
    if builder.pos != len(builder.tokens):
        raise builder.fail(f"unexpected {builder.tokens[builder.pos][1]!r}")
    return Order(
        source,
        tuple(tuple(e) for e in builder.eps),
        tuple(tuple(e) for e in builder.edges),
        start,
        accept,
        frozenset(builder.names),
    )


class OrderMatcher:
    """Runs an :class:`Order` over event types, one at a time."""

    def __init__(self, order: Order) -> None:
        self.order = order
        self.states = self._closure({order.start})

    def _closure(self, states: set[int]) -> frozenset[int]:
        stack = list(states)
        seen = set(states)
        while stack:
            for nxt in self.order.eps[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return frozenset(seen)

    def expected(self) -> list[str]:
        """The event types the grammar can take next, sorted."""
        return sorted({name for s in self.states for name, _ in self.order.edges[s]})

    def step(self, name: str) -> bool:
        """Take event type ``name``; ``False`` (state unchanged) when the grammar cannot."""
        nxt = {dst for s in self.states for label, dst in self.order.edges[s] if label == name}
        if not nxt:
            return False
        self.states = self._closure(nxt)
        return True

    @property
    def complete(self) -> bool:
        """Whether the events so far form a whole sentence of the grammar."""
        return self.order.accept in self.states
