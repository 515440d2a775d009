"""The order grammar of stream contracts: every malformed order is one exact UsageError line, and
the compiled grammar accepts exactly its sentences, with what may come next at each step."""

from __future__ import annotations

import pytest

from replayproxy._core.check.order import OrderMatcher, compile_order
from replayproxy._errors import UsageError

_NAMES = 'names are letters, digits and _ . - : / [ ] or "quoted"'


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("", "order is empty; write e.g. 'started delta* (committed | rejected)'"),
        ("   ", "order is empty; write e.g. 'started delta* (committed | rejected)'"),
        ("a ;b", f"order 'a ;b': unexpected ';' at column 3; {_NAMES}"),
        ("a  ; b", f"order 'a  ; b': unexpected ';' at column 4; {_NAMES}"),
        ("a\t%", f"order 'a\\t%': unexpected '%' at column 3; {_NAMES}"),
        ('"x', f"order '\"x': unexpected '\"' at column 1; {_NAMES}"),
        ('a ""', f"order 'a \"\"': unexpected '\"' at column 3; {_NAMES}"),
        ("a |", "order 'a |': ends where an event name or '(' was expected"),
        ("a (", "order 'a (': ends where an event name or '(' was expected"),
        ("(a", "order '(a': a '(' is not closed"),
        ("(a b", "order '(a b': a '(' is not closed"),
        ("a | | b", "order 'a | | b': an empty alternative (nothing between '|', '(' or ')')"),
        ("(|a)", "order '(|a)': an empty alternative (nothing between '|', '(' or ')')"),
        ("a ()", "order 'a ()': an empty alternative (nothing between '|', '(' or ')')"),
        ("*a", "order '*a': unexpected '*' where an event name or '(' was expected"),
        ("a | +", "order 'a | +': unexpected '+' where an event name or '(' was expected"),
        ("a )", "order 'a )': unexpected ')'"),
        ("a b)", "order 'a b)': unexpected ')'"),
    ],
)
def test_a_malformed_order_is_one_exact_usage_error(source: str, message: str) -> None:
    """The error names the order and what is wrong, with the column of a bad character."""
    with pytest.raises(UsageError) as raised:
        compile_order(source)
    assert str(raised.value) == message


def _accepts(order: str, sentence: str) -> bool:
    matcher = OrderMatcher(compile_order(order))
    words = sentence.split("|") if "|" in sentence else sentence.split()
    return all(matcher.step(w) for w in words) and matcher.complete


@pytest.mark.parametrize(
    ("order", "accepted", "rejected"),
    [
        ("a", ["a"], ["", "a a", "b"]),
        (" a\tb \n", ["a b"], ["a"]),
        ("a b c", ["a b c"], ["a b", "a c", "b c", "a b c c"]),
        ("a?", ["", "a"], ["a a"]),
        ("a+", ["a", "a a a"], [""]),
        ("a*", ["", "a", "a a"], ["b"]),
        ("a**", ["", "a a"], ["b"]),
        ("a+?", ["", "a", "a a"], ["b"]),
        ("a?+", ["", "a", "a a"], ["b"]),
        ("(a b)+ c", ["a b c", "a b a b c"], ["a c", "a b a c", "c"]),
        ("a | b c | d", ["a", "b c", "d"], ["b", "a d", "c"]),
        ("((a))", ["a"], ["", "a a"]),
        ("x (a | b)? y", ["x y", "x a y", "x b y"], ["x a b y"]),
        ('"event one" "two"+', ["event one|two", "event one|two|two"], ["event one"]),
        ("[DONE] x.y:z/w-v_1", ["[DONE] x.y:z/w-v_1"], ["[DONE]"]),
    ],
)
def test_the_order_accepts_exactly_its_sentences(
    order: str, accepted: list[str], rejected: list[str]
) -> None:
    """Sequence, alternation, ? + * (stacked too), groups and quoted names."""
    assert [s for s in accepted if not _accepts(order, s)] == []
    assert [s for s in rejected if _accepts(order, s)] == []


def test_the_names_and_source_of_an_order() -> None:
    """names holds every event type the order mentions, quoted ones unquoted; source is the
    text as written (the contract's messages quote it)."""
    order = compile_order(' a (b | "c d")* [DONE] ')
    assert order.names == frozenset({"a", "b", "c d", "[DONE]"})
    assert order.source == ' a (b | "c d")* [DONE] '


def test_expected_and_complete_step_by_step() -> None:
    """expected() lists the types the grammar takes next, sorted; complete says whether the
    events so far are a whole sentence; a refused step changes neither."""
    matcher = OrderMatcher(compile_order("start (b | a)* end?"))
    assert (matcher.expected(), matcher.complete) == (["start"], False)
    assert matcher.step("start")
    assert (matcher.expected(), matcher.complete) == (["a", "b", "end"], True)
    assert not matcher.step("start")
    assert (matcher.expected(), matcher.complete) == (["a", "b", "end"], True)
    assert matcher.step("b") and matcher.step("a")
    assert matcher.step("end")
    assert (matcher.expected(), matcher.complete) == ([], True)
    assert not matcher.step("a")
