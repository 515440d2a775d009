"""scripts/mutation.py: the parts that need no mutmut run (the sample's maths, reading what
mutmut generated, refusing bad arguments). The mutation runs themselves take minutes to hours
and are not part of the suite (docs/contributing/mutation.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import mutation  # noqa: E402


def test_wilson_interval_matches_the_textbook_values() -> None:
    """90 of 100: 82.6-94.5 % (Wilson 1927; e.g. Newcombe 1998, table I method 3)."""
    low, high = mutation.wilson(90, 100)
    assert low == pytest.approx(82.56, abs=0.01)
    assert high == pytest.approx(94.48, abs=0.01)


def test_wilson_interval_stays_within_0_and_100() -> None:
    """All caught still leaves room below 100 %; nothing counted says nothing."""
    low, high = mutation.wilson(50, 50)
    assert 90.0 < low < 100.0 and high == pytest.approx(100.0)
    assert mutation.wilson(0, 0) == (0.0, 100.0)


def test_generated_reads_every_mutant_name_from_the_meta_files(tmp_path: Path) -> None:
    """Every key of every .meta file under mutants/, sorted: the population a sample draws from."""
    for rel, names in {
        "replayproxy/_core/a.py.meta": [
            "replayproxy._core.a.x_f__mutmut_2",
            "replayproxy._core.a.x_f__mutmut_1",
        ],
        "replayproxy/_engine/b.py.meta": ["replayproxy._engine.b.x_g__mutmut_1"],
    }.items():
        meta = tmp_path / "mutants" / rel
        meta.parent.mkdir(parents=True, exist_ok=True)
        meta.write_text(json.dumps({"exit_code_by_key": dict.fromkeys(names)}))
    assert mutation._generated(tmp_path) == [
        "replayproxy._core.a.x_f__mutmut_1",
        "replayproxy._core.a.x_f__mutmut_2",
        "replayproxy._engine.b.x_g__mutmut_1",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sample", "0"], "--sample needs a positive number of mutants"),
        (["--sample", "5", "_core/wire/sse.py"], "--sample draws from all of _core/ and _engine/"),
        ([], "name modules (e.g. _core/wire/sse.py), or pass --all or --sample N"),
        (["cli/main.py"], "no such module under replayproxy/: cli/main.py"),
    ],
)
def test_bad_arguments_get_a_one_line_error(args: list[str], message: str) -> None:
    """Usage errors exit 2 with the reason, before anything is copied or run."""
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "mutation.py"), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert message in run.stderr
