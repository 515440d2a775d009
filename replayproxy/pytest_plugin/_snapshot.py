"""The ``stream_snapshot`` fixture and ``--replayproxy-snapshot-update``: stream snapshots by
meaning (:mod:`replayproxy.testing._snapshot`) named after the test.

``stream_snapshot(capture)`` compares a :class:`~replayproxy.testing._capture.StreamCapture`
with ``__snapshots__/<test module>/<test name>.json`` beside the test file; a test that takes
several passes ``name=`` (an unnamed second call gets ``<test name>.1``, then ``.2``...).
``--replayproxy-snapshot-update`` writes missing snapshots and rewrites those that differ;
without it ``REPLAYPROXY_SNAPSHOT_UPDATE=1`` does the same. Loaded by the plugin
(``pytest_plugins`` in :mod:`.plugin`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import pytest

from replayproxy._core.check.contract import Contract
from replayproxy._core.providers import Provider
from replayproxy.testing._capture import StreamCapture
from replayproxy.testing._snapshot import assert_matches_snapshot, snapshot_path

__all__ = ["UPDATE_FLAG", "StreamSnapshot", "pytest_addoption", "stream_snapshot"]

UPDATE_FLAG = "--replayproxy-snapshot-update"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("replayproxy").addoption(
        UPDATE_FLAG,
        action="store_true",
        dest="replayproxy_snapshot_update",
        default=False,
        help="Write missing stream snapshots and rewrite those that differ "
        "(the stream_snapshot fixture; also REPLAYPROXY_SNAPSHOT_UPDATE=1).",
    )


class StreamSnapshot:
    """The fixture's value: call it with a capture to compare it with its snapshot."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self._request = request
        self._unnamed = 0

    def path(self, name: str | os.PathLike[str] | None = None) -> Path:
        """Where the snapshot ``name`` (default: the test's name) of this test lives."""
        return snapshot_path(name or self._request.node.name, self._request.path)

    def __call__(
        self,
        capture: StreamCapture,
        name: str | os.PathLike[str] | None = None,
        *,
        ignore: Iterable[str] = (),
        contract: Contract | str | os.PathLike[str] | None = None,
        provider: Provider | str | None = None,
    ) -> None:
        if name is None:
            test = self._request.node.name
            name = test if not self._unnamed else f"{test}.{self._unnamed}"
            self._unnamed += 1
        flag = bool(self._request.config.getoption("replayproxy_snapshot_update"))
        assert_matches_snapshot(
            capture,
            self.path(name),
            ignore=ignore,
            contract=contract,
            provider=provider,
            update=True if flag else None,  # None: the environment decides
        )


@pytest.fixture
def stream_snapshot(request: pytest.FixtureRequest) -> StreamSnapshot:
    """Compare a StreamCapture by meaning with this test's snapshot (see the module doc)."""
    return StreamSnapshot(request)
