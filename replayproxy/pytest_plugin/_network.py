"""The plugin's network block: ``--replayproxy-block-network`` with ``allowed_hosts``, each
attempt reported against the test that was running, at teardown when the test body did not.

:func:`blocked` wraps :func:`~replayproxy._harness.netblock.blocked_network` for one test;
:func:`problem_lines` are the attempts not reported yet (read by the plugin after the test
body); attempts made later (a thread still running, fixture teardown) fail the test at
teardown. Threads are tagged with the test during which they started (the
``pytest_runtest_protocol`` hook below, registered with the block on), so a leftover
thread's attempt names its test.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from replayproxy._core.replay.options import Kind, OptionDef
from replayproxy._harness import threadorigin

if TYPE_CHECKING:  # imported when a test blocks the network (it imports asyncio)
    from replayproxy._harness.netblock import NetworkBlock

__all__ = ["OPTIONS", "blocked", "configure", "hosts_from", "problem_lines"]

OPTIONS = (
    OptionDef(
        "allowed_hosts",
        Kind.LIST,
        [],
        "Hosts the network block lets through (names, IPs, host:port; also the marker "
        "keyword / replayproxy_config key allowed_hosts). Every level adds to the others.",
        metavar="HOST",
    ),
)

_HINT = (
    "add it to allowed_hosts (@pytest.mark.replayproxy(allowed_hosts=[...]), "
    "replayproxy_config, --replayproxy-allowed-hosts or the replayproxy_allowed_hosts ini key)"
)
_REPORTED: pytest.StashKey[int] = pytest.StashKey()


def configure(config: pytest.Config, block_network: bool) -> None:
    """With the block on, tag threads from now on with the test they start in."""
    if block_network:
        threadorigin.install()
        config.pluginmanager.register(_ThreadTags(), "replayproxy-thread-tags")


class _ThreadTags:
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        with threadorigin.during(item.nodeid):
            return (yield)


def hosts_from(setting: Iterable[str], levels: Iterable[dict[str, Any]]) -> list[str]:
    """The allowed hosts of every level (ini / command line, replayproxy_config, markers)."""
    from replayproxy._errors import UsageError

    hosts = list(setting)
    for level in levels:
        value = level.get("allowed_hosts", [])
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, (list, tuple)):
            raise UsageError(f"allowed_hosts: expected a list of hosts, got {value!r}")
        hosts += value
    return hosts


@contextlib.contextmanager
def blocked(item: pytest.Item, hosts: list[str]) -> Iterator[NetworkBlock]:
    """Block the network for ``item``; fail it at teardown for attempts not reported yet."""
    from replayproxy._harness.netblock import blocked_network

    with blocked_network(hosts, label=item.nodeid, hint=_HINT) as net:
        yield net
    late = problem_lines(item, net)
    if late:
        pytest.fail(late, pytrace=False)


def problem_lines(item: pytest.Item, net: NetworkBlock) -> str:
    """One line per attempt not reported yet, naming the host and who made it."""
    done = item.stash.get(_REPORTED, 0)
    attempts = list(net.attempts)
    item.stash[_REPORTED] = len(attempts)
    return "\n".join(
        f"replayproxy: blocked {a.describe()} (--replayproxy-block-network); to let "
        f"{a.host} through, {_HINT}"
        for a in attempts[done:]
    )
