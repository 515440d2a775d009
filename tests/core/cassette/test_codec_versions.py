"""The codec's version check: only the exact integer versions it has a decoder for load."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest

from replayproxy._core.cassette import codec
from replayproxy._core.cassette.model import Cassette
from replayproxy._errors import CassetteVersionError


def _header(version: Any) -> bytes:
    return msgpack.packb({"format": codec.FORMAT_NAME, "version": version, "meta": {}})


@pytest.mark.parametrize("version", [0, -1, 3, None, "1", True, 1.0, [1]])
def test_a_version_without_a_decoder_is_a_version_error(version: Any) -> None:
    """Version 0, a negative one, a future one, None, "1", true, 1.0 or a list: one clear
    CassetteVersionError naming it, never a KeyError or a cassette decoded as version 1."""
    with pytest.raises(CassetteVersionError) as info:
        codec.decode(_header(version))
    message = str(info.value)
    assert f"at byte 0: unknown cassette format version {version!r} " in message
    assert "\n" not in message


def test_the_current_version_loads() -> None:
    """The version this build writes reads back (the check above is not a blanket refusal)."""
    assert codec.decode(codec.encode(Cassette())).cassette == Cassette()
