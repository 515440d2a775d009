"""Pure parts of the plugin and the harness: cassette names, loopback detection."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from replayproxy.pytest_plugin._naming import cassette_name


def test_cassette_name_keeps_plain_names_and_param_ids() -> None:
    """Plain and parametrized names are used as they are; a class name prefixes them."""
    assert cassette_name("test_chat") == "test_chat.cassette"
    assert cassette_name("test_chat[openai-sync]") == "test_chat[openai-sync].cassette"
    assert cassette_name("test_x", "TestChat") == "TestChat.test_x.cassette"


def test_cassette_name_makes_unsafe_ids_safe_and_distinct() -> None:
    """Slashes, spaces and dots at the start are replaced, with a hash keeping ids apart."""
    a, b = cassette_name("test_x[a/b]"), cassette_name("test_x[a_b]")
    assert "/" not in a and a != b and a.startswith("test_x[a_b]-")
    assert not cassette_name("..").startswith(".")


@given(st.text(min_size=1), st.text(min_size=1))
def test_cassette_names_are_safe_and_distinct_for_any_ids(x: str, y: str) -> None:
    """Any two different test names give different, filesystem-safe file names."""
    a, b = cassette_name(x), cassette_name(y)
    assert "/" not in a and "\0" not in a and not a.startswith(".") and len(a) < 255
    if x != y:
        assert a != b
