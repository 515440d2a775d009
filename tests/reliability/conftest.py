"""Fixtures of the reliability suite: a fake upstream that counts connections."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from replayproxy.testing import CountingUpstream


@pytest.fixture
def upstream() -> Iterator[CountingUpstream]:
    """A listening fake upstream on 127.0.0.1; every test ends with 0 connections to it."""
    fake = CountingUpstream()
    try:
        yield fake
    finally:
        fake.close()
    assert fake.connections == 0, f"replay reached the upstream: {fake.heads!r}"
