"""The fault matrix in pytest: one item per cell, the [record] item, the cassette the cells
share, `replayproxy.cell`, skipped cells and bad selections (pytester projects against the
simulator)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from replayproxy._core.matrix import cells
from replayproxy.testing import CountingUpstream, Simulator
from tests.pytest_plugin.matrix_project import results, run_matrix, write_readers
from tests.pytest_plugin.project import run

pytestmark = pytest.mark.slow

CUTS = [cell.id for cell in cells("cuts")]


def test_matrix_cuts_yields_one_item_per_cell(pytester: pytest.Pytester, confdir: Path) -> None:
    """`matrix="cuts"` collects one item per cell of the set, named `test[cuts:SPEC]`, in
    the set's order, for each test of the module (no [record] item in mode none)."""
    write_readers(pytester)
    result = run_matrix(pytester, "--co", "-q", upstream="http://127.0.0.1:9", confdir=confdir)
    collected = [line for line in result.outlines if "::" in line]
    assert collected == [
        f"test_readers.py::{test}[{cell}]"
        for test in ("test_naive_reader", "test_correct_reader")
        for cell in CUTS
    ]


def test_a_list_of_sets_and_specs_and_the_test_s_own_parameters(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """A marker list mixes a set and a spec (each cell once); the test's own parameters come
    first in the id (`test[a-cuts:...]`)."""
    spec = cells("splits")[0].spec
    pytester.makepyfile(
        test_params=f"""
        import pytest

        @pytest.mark.replayproxy(upstream="http://127.0.0.1:9", matrix=["cuts", {spec!r}, "cuts"])
        @pytest.mark.parametrize("who", ["a", "b"])
        def test_x(replayproxy, who):
            pass
        """
    )
    result = run(pytester, "--co", "-q", upstream="http://127.0.0.1:9", confdir=confdir)
    collected = [line.split("::")[1] for line in result.outlines if "::" in line]
    mine = [*CUTS, *[c.id for c in cells([spec]) if c.id not in CUTS]]
    assert collected == [f"test_x[{who}-{cell}]" for who in ("a", "b") for cell in mine]


def test_record_item_records_once_then_the_cells_replay_it(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """A missing cassette in record mode `once` gets a `[record]` item first, which records it
    without a fault (one upstream request per test); the cells then replay it, named after the
    test alone, and a second run has no [record] item and makes no request."""
    write_readers(pytester)
    with Simulator() as sim:
        result = run_matrix(
            pytester, "--replayproxy-record-mode=once", "-v", upstream=sim.url, confdir=confdir
        )
        assert len(sim.served) == 2  # one recording per test, nothing from the cells
    lines = [line for line in result.outlines if "test_correct_reader[" in line]
    assert lines[0].startswith("test_readers.py::test_correct_reader[record] PASSED")
    assert len(lines) == 1 + len(CUTS)
    folder = pytester.path / "cassettes" / "test_readers"
    assert sorted(p.name for p in folder.iterdir()) == [
        "test_correct_reader.cassette",
        "test_naive_reader.cassette",
    ]
    with Simulator() as sim:
        again = run_matrix(pytester, "--replayproxy-record-mode=once", "-v", upstream=sim.url)
        assert sim.connections == 0
    assert "[record]" not in again.stdout.str()


def test_cells_whose_record_item_has_not_run_are_skipped_saying_so(
    pytester: pytest.Pytester, confdir: Path, counter: CountingUpstream
) -> None:
    """In record mode `once`, cells run without their [record] item (deselected here, or on
    another worker) are skipped, naming the missing recording, never recorded with a fault."""
    write_readers(pytester)
    upstream = f"http://127.0.0.1:{counter.port}"
    result = run_matrix(
        pytester, "--replayproxy-record-mode=once", "-k", "not record", upstream=upstream,
        confdir=confdir,
    )  # fmt: skip
    result.assert_outcomes(skipped=2 * len(CUTS))
    result.stdout.fnmatch_lines(["SKIPPED * is not recorded yet; its ?record? item records it*"])
    assert counter.connections == 0
    assert not (pytester.path / "cassettes").exists()


def test_own_parameters_share_one_cassette_per_parameter(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """Under a matrix, `test_x[a-cell]` and `test_x[a-record]` use `test_x[a].cassette`,
    the cassette the test has without the matrix."""
    pytester.makepyfile(
        test_params="""
        import os

        import httpx
        import pytest

        UPSTREAM = os.environ["RP_UPSTREAM"]

        @pytest.mark.replayproxy(upstream=UPSTREAM, matrix="cuts")
        @pytest.mark.parametrize("who", ["a", "b"])
        def test_x(replayproxy, who):
            body = {"model": "m", "max_tokens": 8, "stream": True,
                    "messages": [{"role": "user", "content": who}]}
            try:
                httpx.post(replayproxy.url + "/v1/messages", json=body, timeout=10).read()
            except httpx.TransportError:
                pass
        """
    )
    with Simulator() as sim:
        result = run(
            pytester, "--replayproxy-record-mode=once", "-v", upstream=sim.url, confdir=confdir
        )
        assert len(sim.served) == 2
    ran = re.findall(r"^test_params.py::(\S+) (?:PASSED|FAILED|SKIPPED)", result.stdout.str(), re.M)
    assert ran == [f"test_x[{w}-{c}]" for w in ("a", "b") for c in ("record", *CUTS)]
    folder = pytester.path / "cassettes" / "test_params"
    assert sorted(p.name for p in folder.iterdir()) == ["test_x[a].cassette", "test_x[b].cassette"]


def test_cell_is_the_item_s_cell_and_none_outside_a_matrix(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """`replayproxy.cell` has `.set`, `.spec`, `.name`, `.outcome` of the item's cell; it is
    `None` in the [record] item and in a test without a matrix."""
    pytester.makepyfile(
        test_cell="""
        import os

        import httpx
        import pytest

        UPSTREAM = os.environ["RP_UPSTREAM"]
        SEEN = []

        def ask(replayproxy):
            body = {"model": "m", "max_tokens": 8, "stream": True,
                    "messages": [{"role": "user", "content": "hi"}]}
            try:
                httpx.post(replayproxy.url + "/v1/messages", json=body, timeout=10).read()
            except httpx.TransportError:
                pass

        @pytest.mark.replayproxy(upstream=UPSTREAM, matrix="cuts")
        def test_cells(replayproxy, request):
            ask(replayproxy)
            cell = replayproxy.cell
            if request.node.name.endswith("[record]"):
                assert cell is None
            else:
                assert request.node.name == f"test_cells[{cell.set}:{cell.spec}]"
                assert cell.set == "cuts" and cell.outcome == "incomplete"
                assert cell.spec.startswith(cell.name + ":") or cell.spec == cell.name
                print(f"CELL {cell.id} {cell.name} {cell.outcome}")

        @pytest.mark.replayproxy(upstream=UPSTREAM)
        def test_plain(replayproxy):
            ask(replayproxy)
            assert replayproxy.cell is None
        """
    )
    with Simulator() as sim:
        result = run(
            pytester, "--replayproxy-record-mode=once", "-s", upstream=sim.url, confdir=confdir
        )
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes["passed"] >= 2, result.stdout.str()
    printed = re.findall(r"CELL (\S+) ", result.stdout.str())
    ran = len(CUTS) - outcomes.get("skipped", 0)
    assert len(printed) == ran and set(printed) <= set(CUTS)


def test_mode_none_with_a_missing_cassette_fails_every_item_as_usual(
    pytester: pytest.Pytester, confdir: Path, counter: CountingUpstream
) -> None:
    """In record mode none a missing cassette has no [record] item, and every cell fails with
    the usual message (it does not exist; record it with record mode once)."""
    write_readers(pytester)
    upstream = f"http://127.0.0.1:{counter.port}"
    report = "--replayproxy-matrix-report=r.json"
    result = run_matrix(pytester, report, upstream=upstream, confdir=confdir)
    result.assert_outcomes(failed=2 * len(CUTS))
    assert "[record]" not in result.stdout.str()
    found = results(pytester.path / "r.json")
    assert len(found) == 2 * len(CUTS)
    for r in found:
        assert r["passed"] is False
        assert r["failure"].startswith("replayproxy: cassette ")
        assert r["failure"].endswith(
            f"{r['test'].split('::')[1]}.cassette does not exist; record it with record mode "
            "once (pytest: --replayproxy-record-mode=once)"
        )
    assert counter.connections == 0


def test_a_cell_that_cannot_apply_is_skipped_with_its_reason(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """A cell whose position is past the end of the recorded stream is skipped, not failed,
    and the skip names the cell and the reason (in -rs and in the report)."""
    write_readers(pytester)
    with Simulator() as sim:
        run_matrix(pytester, "--replayproxy-record-mode=once", upstream=sim.url, confdir=confdir)
    result = run_matrix(
        pytester, "--replayproxy-matrix-report=out/r.json",
        matrix="reset:events=1000", upstream="http://127.0.0.1:9", confdir=confdir,
    )  # fmt: skip
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["SKIPPED * replayproxy: cell *reset:events=1000 does not apply*"])
    found = results(pytester.path / "out" / "r.json")
    assert [r["passed"] for r in found] == [None, None]
    assert all("does not apply" in r["failure"] for r in found)


def test_a_bad_selection_is_one_line_where_it_was_set(pytester: pytest.Pytester) -> None:
    """An unknown set in the marker is a collection error of its module in one line naming
    the keyword; on the command line a usage error naming the option; as a
    `replayproxy_config` key, an error saying to use the marker or the option."""
    write_readers(pytester)
    marker = run_matrix(pytester, matrix="nosuchset", upstream="http://127.0.0.1:9")
    marker.stdout.fnmatch_lines(["*replayproxy: @pytest.mark.replayproxy keyword 'matrix': *"])
    assert "Traceback" not in marker.stdout.str()
    assert marker.ret != 0
    option = run(pytester, "--replayproxy-matrix=nosuchset", upstream="http://127.0.0.1:9")
    option.stderr.fnmatch_lines(["*option --replayproxy-matrix: *nosuchset*"])
    assert option.ret == pytest.ExitCode.USAGE_ERROR
    pytester.makeconftest(
        """
        import pytest

        @pytest.fixture
        def replayproxy_config():
            return {"matrix": "cuts"}
        """
    )
    config = run(pytester, "-k", "correct", upstream="http://127.0.0.1:9", env={"RP_MATRIX": ""})
    config.stdout.fnmatch_lines(["*replayproxy_config key 'matrix'*marker keyword matrix=*"])


def test_the_ini_key_the_marker_and_the_option_from_weakest_to_strongest(
    pytester: pytest.Pytester, confdir: Path
) -> None:
    """`replayproxy_matrix` in the ini file parametrizes every replayproxy test; a marker's
    `matrix=` wins over it for its test (`matrix=None` turns it off); the command line wins
    over both."""
    pytester.makeini("[pytest]\nreplayproxy_matrix = splits\n")
    pytester.makepyfile(
        test_levels="""
        import pytest

        @pytest.mark.replayproxy(upstream="http://127.0.0.1:9")
        def test_ini(replayproxy):
            pass

        @pytest.mark.replayproxy(upstream="http://127.0.0.1:9", matrix="cuts")
        def test_marker(replayproxy):
            pass

        @pytest.mark.replayproxy(upstream="http://127.0.0.1:9", matrix=None)
        def test_off(replayproxy):
            pass
        """
    )

    def collected(*args: str) -> list[str]:
        result = run(pytester, "--co", "-q", *args, upstream="http://127.0.0.1:9", confdir=confdir)
        return [line.split("::")[1] for line in result.outlines if "::" in line]

    splits = [c.id for c in cells("splits")]
    assert collected() == [
        *[f"test_ini[{c}]" for c in splits],
        *[f"test_marker[{c}]" for c in CUTS],
        "test_off",
    ]
    errors = [c.id for c in cells("errors")]
    assert collected("--replayproxy-matrix=errors") == [
        f"{test}[{c}]" for test in ("test_ini", "test_marker", "test_off") for c in errors
    ]
