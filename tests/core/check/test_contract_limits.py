"""Contract documents are bounded (core/check/contract.py): size, nesting of tables and arrays,
and the ``order`` expression's length and parentheses; each limit is one UsageError line."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy._core.check.contract import (
    MAX_CONTRACT_CHARS,
    MAX_CONTRACT_DEPTH,
    MAX_ORDER_CHARS,
    MAX_ORDER_DEPTH,
    parse_contract,
)
from replayproxy._errors import UsageError


def _order(source: str) -> str:
    return f"[events]\norder = {json.dumps(source)}\n"


@pytest.mark.parametrize("depth", [MAX_ORDER_DEPTH + 1, 260, 4000])
def test_deep_parentheses_in_order_are_one_line(depth: int) -> None:
    """260 nested parentheses used to raise RecursionError; now a line naming the limit."""
    with pytest.raises(UsageError, match=f"nests parentheses {depth} deep; the limit is 32"):
        parse_contract(_order("(" * depth + "a" + ")" * depth), fmt="toml")


def test_order_at_the_depth_limit_compiles() -> None:
    """Exactly MAX_ORDER_DEPTH parentheses are fine; parentheses in quoted names do not count."""
    depth = MAX_ORDER_DEPTH
    contract = parse_contract(_order("(" * depth + "a" + ")" * depth), fmt="toml")
    assert contract.order is not None and contract.order.names == {"a"}
    quoted = '"' + "(" * 40 + '" b'
    assert parse_contract(_order(quoted), fmt="toml").order is not None


def test_a_long_order_is_refused() -> None:
    """An order longer than MAX_ORDER_CHARS: one line with its length and the limit."""
    with pytest.raises(UsageError, match=f"the limit is {MAX_ORDER_CHARS}"):
        parse_contract(_order(" ".join(["a"] * MAX_ORDER_CHARS)), fmt="toml")


@pytest.mark.parametrize(
    ("text", "fmt"),
    [
        ("zzz = " + "[" * 500 + "]" * 500 + "\n", "toml"),
        ("[fields]\nsame = " + "[" * 40 + "]" * 40 + "\n", "toml"),
        ("x = " + "{a = " * 300 + "1" + "}" * 300 + "\n", "toml"),
        ("[" * 5000 + "]" * 5000, "json"),
        ('{"events": ' + '{"a": ' * 200 + "1" + "}" * 200 + "}", "json"),
        ("[" * 100_000 + "]" * 100_000, "json"),
    ],
)
def test_deep_documents_are_one_line(text: str, fmt: str) -> None:
    """Deep TOML arrays and inline tables (even under an unknown key) and deep JSON: one line."""
    with pytest.raises(UsageError) as e:
        parse_contract(text, fmt=fmt)  # type: ignore[arg-type]
    assert str(e.value) == (
        f"contract nests tables or arrays deeper than {MAX_CONTRACT_DEPTH} levels "
        "(a contract needs 4)"
    )


def test_a_huge_document_is_refused_before_parsing() -> None:
    """Over MAX_CONTRACT_CHARS characters: refused by its length."""
    with pytest.raises(UsageError, match="characters long; the limit is 1000000"):
        parse_contract("#" * (MAX_CONTRACT_CHARS + 1), fmt="toml")


def test_a_real_contract_is_well_inside_the_limits() -> None:
    """The documented example shape (record tables, 4 levels) parses."""
    text = """
[events]
start = ["started"]
terminal = ["committed"]
order = "started (delta | (tool (arg)*))* committed"
[fields.record]
committed = { "/id" = "/message_id" }
"""
    contract = parse_contract(text, fmt="toml")
    assert contract.record_for("committed") == (("/id", "/message_id"),)


@given(st.text(alphabet='()[]{}"ab |*=\n', max_size=300))
def test_any_order_source_is_a_contract_or_one_line(source: str) -> None:
    """Any order expression: a contract, or a one-line UsageError (never RecursionError)."""
    try:
        parse_contract(_order(source), fmt="toml")
    except UsageError as e:
        assert "\n" not in str(e)
