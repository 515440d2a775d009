"""``--expect CLASS=0|nonzero|N|any`` (core/matrix/expect.py): the defaults, parsing, errors,
and which exit statuses (or a timeout) meet each expectation."""

from __future__ import annotations

import pytest

from replayproxy._core.matrix import OUTCOMES
from replayproxy._core.matrix.expect import Expect, expectations
from replayproxy._errors import UsageError


def test_only_same_is_constrained_by_default() -> None:
    """same=0; every other class takes any status."""
    got = expectations([])
    assert got == {o: Expect("0" if o == "same" else "any") for o in OUTCOMES}


def test_items_override_the_defaults_and_later_ones_win() -> None:
    """A class given twice keeps the last; numbers are normalised (``007`` is 7)."""
    got = expectations(["incomplete=nonzero", "same=any", "hang=007", "hang=nonzero"])
    assert got["incomplete"] == Expect("nonzero")
    assert got["same"] == Expect("any")
    assert got["hang"] == Expect("nonzero")
    assert expectations(["provider-error=007"])["provider-error"] == Expect("7")


@pytest.mark.parametrize(
    ("text", "status", "met"),
    [
        ("0", 0, True), ("0", 1, False), ("0", None, False),
        ("nonzero", 1, True), ("nonzero", 0, False), ("nonzero", None, False),
        ("3", 3, True), ("3", 1, False), ("3", None, False),
        ("any", 0, True), ("any", 9, True), ("any", None, True),
    ],
)  # fmt: skip
def test_which_statuses_meet_an_expectation(text: str, status: int | None, met: bool) -> None:
    """A timeout (None) meets only ``any``: being killed is not handling the fault."""
    assert Expect(text).met(status) is met


@pytest.mark.parametrize(
    ("item", "words"),
    [
        ("sam=0", ["--expect 'sam=0'", "CLASS one of same, incomplete, provider-error"]),
        ("same", ["--expect 'same'", "CLASS=0|nonzero|N|any"]),
        ("hang=maybe", ["the status must be 0, nonzero, a number N or any"]),
        ("hang=-1", ["the status must be"]),
        ("hang=256", ["an exit status is 0-255"]),
    ],
)
def test_a_bad_item_is_one_line_naming_the_flag(item: str, words: list[str]) -> None:
    """An unknown class or status: one line naming the flag and what is valid."""
    with pytest.raises(UsageError) as info:
        expectations([item])
    assert "\n" not in str(info.value)
    for word in words:
        assert word in str(info.value)
