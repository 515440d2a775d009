"""``replayproxy check --contract`` on abusive contract files: one line and exit status 3
(issue 28, item 6), never a RecursionError traceback with exit 1 ("the stream broke it")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXE = str(Path(sys.executable).with_name("replayproxy"))

CASES = {
    "order.toml": '[events]\norder = "' + "(" * 260 + "a" + ")" * 260 + '"\n',
    "array.toml": "zzz = " + "[" * 500 + "]" * 500 + "\n",
    "deep.json": "[" * 5000 + "]" * 5000,
    "big.toml": "# padding\n" * 150_000,
    "malformed.toml": "[events]\norder = 'a ('\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_bad_contract_is_one_line_and_exit_3(tmp_path: Path, name: str) -> None:
    """Deep order, deep TOML array, deep JSON, huge file, malformed: ``error: FILE: ...`` on one
    line, exit status 3, for --stdin and for a cassette alike."""
    contract = tmp_path / name
    contract.write_text(CASES[name])
    run = subprocess.run(
        [EXE, "check", "--stdin", "--contract", str(contract)],
        input=b"event: a\ndata: {}\n\n", capture_output=True, timeout=60,
    )  # fmt: skip
    err = run.stderr.decode()
    assert run.returncode == 3, err
    assert err.startswith(f"error: {contract}: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and "RecursionError" not in err


def test_a_broken_stream_is_still_exit_1(tmp_path: Path) -> None:
    """A good contract that the stream breaks keeps exit status 1: the two are told apart."""
    contract = tmp_path / "turn.toml"
    contract.write_text('[events]\nterminal = ["done"]\norder = "a done"\n')
    run = subprocess.run(
        [EXE, "check", "--stdin", "--contract", str(contract)],
        input=b"event: a\ndata: {}\n\n", capture_output=True, timeout=60,
    )  # fmt: skip
    assert run.returncode == 1, run.stderr.decode()
