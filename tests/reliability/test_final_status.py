"""``status:code=`` takes final statuses only, 200-599 (issue 28, item 11): ``status:code=100``
used to send a 1xx as the final response, and the client waited for ever."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core.faults.params import http_status
from replayproxy.testing._builders import cassette, interaction

EXE = str(Path(sys.executable).with_name("replayproxy"))


ARABIC_500 = "\u0665\u0660\u0660"


@pytest.mark.parametrize("code", ["100", "101", "199", "600", "0", ARABIC_500, "+200", " 200"])
def test_non_final_statuses_are_refused(code: str) -> None:
    """1xx, out of range, other scripts' digits, signs: refused with what is valid."""
    with pytest.raises(ValueError, match="must be a final HTTP status 200-599"):
        http_status(code)


@pytest.mark.parametrize("code", ["200", "204", "429", "529", "599"])
def test_final_statuses_are_taken(code: str) -> None:
    """The documented range, bounds included."""
    assert http_status(code) == int(code)


@pytest.mark.parametrize("where", ["flag", "stored"])
def test_replay_refuses_status_100_in_one_line(tmp_path: Path, where: str) -> None:
    """``--fault status:code=100`` (or one stored in the cassette): ``replay`` stops before it
    listens, with one line and exit status 2, instead of hanging the client."""
    path = tmp_path / "c.cassette"
    it = interaction()
    if where == "stored":
        it = replace(it, faults=("status:code=100",))
    store.save(path, cassette(it))
    flag = ["--fault", "status:code=100"] if where == "flag" else []
    run = subprocess.run(
        [EXE, "replay", str(path), *flag, "--upstream", "http://api.example", "--listen",
         "127.0.0.1:0", "--", sys.executable, "-c", "print('the command must not run')"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    assert "must be a final HTTP status 200-599" in run.stderr
    assert run.stderr.count("\n") == 1 and "must not run" not in run.stdout
