"""Fixtures for the plugin's tests: a shared mitmproxy confdir, an environment restored after
each test, and a listener that counts connections (a stand-in upstream that must get none)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from replayproxy.testing import CountingUpstream


@pytest.fixture(scope="session")
def confdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mitmproxy confdir (CA) for every inner run, away from ~/.mitmproxy."""
    return tmp_path_factory.mktemp("mitmproxy-confdir")


@pytest.fixture(autouse=True)
def isolated_env() -> Iterator[None]:
    """The inner runs read their settings from os.environ: restore it afterwards."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture
def counter() -> Iterator[CountingUpstream]:
    """A TCP listener counting connections: the upstream a replay must never contact."""
    c = CountingUpstream()
    yield c
    c.close()
