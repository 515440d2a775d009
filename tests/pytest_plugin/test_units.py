"""Pure parts of the plugin and the harness: cassette names, loopback detection."""

from __future__ import annotations

import socket

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replayproxy.harness.netblock import NetworkBlockedError, blocked_network, is_loopback
from replayproxy.pytest_plugin.naming import cassette_name


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


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        (("127.0.0.1", 80), True),
        (("127.8.9.10", 80), True),
        (("::1", 80, 0, 0), True),
        (("::ffff:127.0.0.1", 80, 0, 0), True),
        (("localhost", 80), True),
        ("/tmp/some.sock", True),
        (("203.0.113.7", 80), False),
        (("0.0.0.0", 80), False),
        (("10.0.0.1", 80), False),
        (("api.openai.com", 443), False),
        (("2001:db8::1", 443, 0, 0), False),
    ],
)
def test_is_loopback(address: object, loopback: bool) -> None:
    """Only loopback addresses (and non-IP sockets) count as local."""
    assert is_loopback(address) is loopback


def test_blocked_network_refuses_non_loopback_and_restores_connect() -> None:
    """Inside the block a non-loopback address is refused by connect() itself and recorded;
    loopback still connects; outside the block connect is restored. (0.0.0.0 is not a
    loopback address, yet Linux delivers it locally: nothing leaves the machine even if the
    block were broken, the local listener would just see the connection.)"""
    original = socket.socket.connect
    server = socket.create_server(("0.0.0.0", 0))
    port = server.getsockname()[1]
    try:
        with blocked_network() as block:
            with socket.socket() as s, pytest.raises(NetworkBlockedError, match=r"0\.0\.0\.0"):
                s.connect(("0.0.0.0", port))
            with socket.socket() as s:
                assert s.connect_ex(("127.0.0.1", port)) == 0
        assert block.attempts == [f"0.0.0.0:{port}"]
        assert socket.socket.connect is original
    finally:
        server.close()
