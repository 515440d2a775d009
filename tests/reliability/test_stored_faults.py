"""Faults stored in a cassette are checked when it loads for replay: a bad one stops replay
before it starts, naming the interaction, instead of answering errors later."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from replayproxy import _store as store
from replayproxy._cli import cli
from replayproxy._core.cassette.model import Cassette
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy._errors import CassetteFormatError

EXAMPLE = Path(__file__).resolve().parents[2] / "cassettes" / "anthropic-text.cassette"
BAD = ["stall:bogus=1", "nope", "reset:events=-1", "status:code=700", "ttfb:delay=-1"]


def _cassette(spec: str) -> Cassette:
    x = store.load(EXAMPLE).interactions[0]
    return Cassette((x, replace(x, faults=("reset:events=1", spec))))


@pytest.mark.parametrize("spec", BAD)
def test_session_refuses_a_bad_stored_fault_naming_the_interaction(spec: str) -> None:
    """ReplaySession and ReplayServer refuse at construction: interaction 1 and the spec."""
    for make in (ReplaySession, ReplayServer):
        with pytest.raises(CassetteFormatError) as info:
            make(_cassette(spec))
        message = str(info.value)
        assert message.startswith("cassette: interaction 1 (POST /v1/messages): stored fault")
        assert repr(spec) in message and "\n" not in message


def test_replay_cli_refuses_to_start(tmp_path: Path) -> None:
    """`replayproxy replay` with a bad stored fault: one line naming file and interaction,
    exit 2, and it never listens."""
    path = tmp_path / "c.cassette"
    store.save(path, _cassette("stall:bogus=1"))
    args = ["replay", "--listen", "127.0.0.1:0", "--confdir", str(tmp_path / "conf"), str(path)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert result.output.startswith(f"error: {path}: interaction 1 (POST /v1/messages): stored")
    assert len(result.output.strip().splitlines()) == 1
    assert "listening" not in result.output


def test_good_stored_faults_still_load() -> None:
    """Valid stored faults pass the check (the check refuses only what plan() would)."""
    session = ReplaySession(_cassette("truncate:events=2"))
    assert session.summary().recorded == 2


def test_inspection_and_repair_still_open_a_cassette_with_a_bad_stored_fault(
    tmp_path: Path,
) -> None:
    """Only replay refuses: `cassette show` and `edit --remove-fault` still work, so it can be
    fixed."""
    path = tmp_path / "c.cassette"
    store.save(path, _cassette("stall:bogus=1"))
    shown = CliRunner().invoke(cli, ["cassette", "show", str(path)])
    assert shown.exit_code == 0 and "stall:bogus=1" in shown.output
    fixed = CliRunner().invoke(
        cli, ["cassette", "edit", str(path), "--in-place", "--remove-fault", "stall:bogus=1"]
    )
    assert fixed.exit_code == 0, fixed.output
    ReplaySession(path)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"reason": "OK\r\nSet-Cookie: a=1"}, "response.reason contains CR"),
        ({"headers": ((b"x-a", b"1\r\nInjected: 1"),)}, "response.headers[0].value contains CR"),
        ({"status": 1000}, "response.status 1000 is not an HTTP status"),
    ],
)
def test_a_cassette_built_in_code_is_checked_like_a_loaded_one(
    change: dict[str, object], field: str
) -> None:
    """A Cassette object handed to ReplaySession/ReplayServer never went through a loader: it is
    checked the same way, so no header can be injected into a response to a client."""
    x = store.load(EXAMPLE).interactions[0]
    assert x.response is not None
    bad = Cassette((x, replace(x, response=replace(x.response, **change))))  # type: ignore[arg-type]
    for make in (ReplaySession, ReplayServer):
        with pytest.raises(CassetteFormatError, match=re.escape(f"interaction 1: {field}")):
            make(bad)
