"""``replayproxy matrix`` as a user runs it: a subprocess running real clients (curl in a shell
script, a Node ``fetch`` script) once per cell, in base-URL and forward-proxy mode; exit
statuses by ``--expect``, timeouts that end only the command, skips, the report files, and
one-line usage errors."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core.matrix import OUTCOMES, SETS, MatrixReport
from replayproxy.testing import JSON_HEADERS, cassette, interaction

ROOT = Path(__file__).resolve().parents[2]
CHAT = ROOT / "cassettes" / "openai-chat-text.cassette"
REPLAYPROXY = [sys.executable, "-c", "from replayproxy._cli import main; main()"]
UPSTREAM = "https://api.openai.com"

# curl as a naive client: whatever arrives is the answer; the exit status is curl's (a reset
# or a missing chunked terminator fails it, a clean end before [DONE] does not).
NAIVE = """#!/bin/sh
curl -sN --fail --max-time "${MAXTIME:-5}" -X POST -H 'content-type: application/json' \\
  --data-binary @"$BODY" "${URL:-$REPLAYPROXY_URL}/v1/chat/completions" > "$OUT"
"""
# A correct reader: the stream must end with [DONE], or the answer is incomplete.
CHECKED = NAIVE + 'grep -q "^data: \\[DONE\\]" "$OUT"\n'
# No --max-time: under a hang it waits for ever; it records its own and curl's PIDs.
HANGS = """#!/bin/sh
echo $$ > "$PIDS"
curl -sN -X POST --data-binary @"$BODY" "$REPLAYPROXY_URL/v1/chat/completions" > "$OUT" &
echo $! >> "$PIDS"
wait
"""
NODE = """
const body = require("fs").readFileSync(process.env.BODY);
(async () => {
  const r = await fetch(process.env.REPLAYPROXY_URL + "/v1/chat/completions", {
    method: "POST", headers: {"content-type": "application/json"}, body,
    signal: AbortSignal.timeout(3000)});
  if (!r.ok) { console.log("HTTP " + r.status); process.exit(3); }
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of r.body) text += decoder.decode(chunk, {stream: true});
  if (!text.includes("data: [DONE]")) { console.log("no [DONE]"); process.exit(4); }
})().catch((e) => { console.log("error: " + e.message); process.exit(5); });
"""


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("matrix")
    (d / "body.json").write_bytes(store.load(CHAT).interactions[0].request.body)
    for name, text in (("naive.sh", NAIVE), ("checked.sh", CHECKED), ("hangs.sh", HANGS)):
        (d / name).write_text(text)
        (d / name).chmod(0o755)
    (d / "client.js").write_text(NODE)
    return d


def matrix(work: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(BODY=str(work / "body.json"), OUT=str(work / "out.txt"), PIDS=str(work / "pids"))
    cmd = [*REPLAYPROXY, "matrix", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def rows(out: str) -> dict[str, list[str]]:
    """The cell rows of the printed matrix: cell id -> [outcome, exit, time, result...]."""
    return {
        parts[0]: parts[1:]
        for parts in (line.split() for line in out.splitlines())
        if len(parts) >= 3 and ":" in parts[0] and parts[1] in OUTCOMES
    }


def test_a_naive_curl_client_fails_the_incomplete_cells_it_passes(work: Path) -> None:
    """curl exits 0 on a clean end without [DONE]: with incomplete=nonzero the truncate cells
    miss their expectation (exit 1), while reset and close make curl fail as expected."""
    done = matrix(
        work, str(CHAT), "--upstream", UPSTREAM, "--set", "cuts",
        "--expect", "incomplete=nonzero", "--", str(work / "naive.sh"),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    got = rows(done.stdout)
    assert list(got) == [c.id for c in SETS["cuts"]]
    for cell, row in got.items():
        outcome, status = row[0], row[1]
        assert outcome == "incomplete"
        if "truncate" in cell:
            assert status == "0" and row[3:6] == ["FAIL:", "expected", "nonzero,"], row
        else:
            assert status != "0" and row[3] == "pass", row
    assert "12 cells: 4 failed, 0 skipped; passed by class: incomplete 8/12" in done.stdout


def test_a_client_that_checks_for_done_passes_every_class(work: Path, tmp_path: Path) -> None:
    """The same curl plus a check for [DONE] fails every incomplete, error and hang cell and
    passes the others: exit 0 with incomplete/provider-error=nonzero and same=0 (the default);
    the JSON report and its Markdown say the same, with the command as the test."""
    report = tmp_path / "m.json"
    script = str(work / "checked.sh")
    done = matrix(
        work, str(CHAT), "--upstream", UPSTREAM, "--set", "splits,cuts,errors,events",
        "--expect", "incomplete=nonzero", "--expect", "provider-error=nonzero",
        "--report", str(report), "--", script,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    got = rows(done.stdout)
    expected = [c for s in ("splits", "cuts", "errors", "events") for c in SETS[s]]
    assert list(got) == [c.id for c in expected]
    for c in expected:
        status = got[c.id][1]
        assert (status == "0") == (c.outcome in ("same", "altered")), (c.id, got[c.id])
    loaded = MatrixReport.from_json(report.read_text(), str(report))
    assert {r.test for r in loaded.results} == {script}
    assert sorted(r.cell for r in loaded.results) == sorted(c.id for c in expected)
    assert all(r.passed is True for r in loaded.results)
    assert all(r.duration > 0 for r in loaded.results)
    md = report.with_suffix(".md").read_text()
    assert f"| `{SETS['cuts'][0].id}` | incomplete | \u2713 |" in md
    assert f"{len(expected)} passed, 0 failed, 0 skipped." in md


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie left to an init that has not reaped it yet does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def test_a_hanging_command_is_ended_at_the_timeout_and_only_it(work: Path) -> None:
    """Under hang:events=middle a curl with no timeout of its own never ends: the matrix ends
    its process group at --timeout, records "timeout", which meets hang=nonzero not; the
    script and its curl are gone afterwards."""
    done = matrix(
        work, str(CHAT), "--upstream", UPSTREAM, "--fault-cell", "hang:events=middle",
        "--expect", "hang=nonzero", "--timeout", "1.5", "--", str(work / "hangs.sh"),
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    row = rows(done.stdout)["spec:hang:events=middle"]
    assert row[:2] == ["hang", "timeout"]
    assert " ".join(row[3:]) == "FAIL: expected nonzero, got timeout"
    pids = [int(p) for p in (work / "pids").read_text().split()]
    assert len(pids) == 2
    assert not [pid for pid in pids if _alive(pid)]


def test_a_client_with_its_own_timeout_meets_hang_nonzero(work: Path) -> None:
    """curl --max-time fails the hang cell by itself: that meets hang=nonzero."""
    done = matrix(
        work, str(CHAT), "--upstream", UPSTREAM, "--fault-cell", "hang:events=middle",
        "--expect", "hang=nonzero", "--", "env", "MAXTIME=1", str(work / "naive.sh"),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    row = rows(done.stdout)["spec:hang:events=middle"]
    assert row[:2] == ["hang", "28"] and row[3:] == ["pass", "(nonzero)"]  # curl: timed out


def test_forward_proxy_mode_gives_curl_the_proxy_and_the_ca(work: Path, tmp_path: Path) -> None:
    """Without --upstream each cell runs behind mitmproxy: curl reaches the recorded https
    host through HTTPS_PROXY and trusts the CA from CURL_CA_BUNDLE, as under replay."""
    done = matrix(
        work, str(CHAT), "--confdir", str(tmp_path / "conf"),
        "--fault-cell", "truncate:events=middle", "--fault-cell", "split:bytes=3,gap=0.00002",
        "--expect", "incomplete=nonzero", "--", "env", f"URL={UPSTREAM}", str(work / "checked.sh"),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    got = rows(done.stdout)
    assert got["spec:truncate:events=middle"][1] == "1"
    assert got["spec:split:bytes=3,gap=0.00002"][1] == "0"
    assert "unmatched" not in done.stdout + done.stderr
    assert "no request reached" not in done.stderr


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_node_fetch_client(work: Path) -> None:
    """Node's fetch reading the stream to the end and checking for [DONE]: a reset, a
    truncation and a 529/503 all fail it, a byte-by-byte split does not."""
    done = matrix(
        work, str(CHAT), "--upstream", UPSTREAM,
        "--fault-cell", "reset:events=middle", "--fault-cell", "truncate:events=before-terminal",
        "--fault-cell", "status:code=overloaded", "--fault-cell", "split:bytes=1,gap=0.00002",
        "--expect", "incomplete=nonzero", "--expect", "provider-error=3",
        "--", "node", str(work / "client.js"),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    got = rows(done.stdout)
    assert got["spec:reset:events=middle"][1] == "5"  # fetch raised: terminated
    assert got["spec:truncate:events=before-terminal"][1] == "4"  # no [DONE]
    assert got["spec:status:code=overloaded"][1] == "3"  # HTTP 503
    assert got["spec:split:bytes=1,gap=0.00002"][1] == "0"


def test_cells_a_cassette_cannot_take_are_skipped(work: Path, tmp_path: Path) -> None:
    """A cassette without an event stream: every cell is skipped with the reason, the
    command never runs, and nothing missed its expectation (exit 0)."""
    path = tmp_path / "json.cassette"
    store.save(path, cassette(interaction([b'{"data": []}'], headers=JSON_HEADERS)))
    marker = tmp_path / "ran"
    done = matrix(work, str(path), "--set", "cuts", "--", "touch", str(marker))
    assert done.returncode == 0, done.stdout + done.stderr
    got = rows(done.stdout)
    assert len(got) == len(SETS["cuts"])
    assert all(
        " ".join(r[2:]) == "skip: no HTTP event stream in the cassette" for r in got.values()
    )
    assert not marker.exists()
    assert "12 cells: 0 failed, 12 skipped" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "cutz", "--", "true"], "error: unknown fault matrix set 'cutz'; valid sets:"),
        (["--expect", "sam=0", "--", "true"], "error: --expect 'sam=0': expected CLASS="),
        (["--expect", "hang=maybe", "--", "true"], "error: --expect 'hang=maybe': the status"),
        (["--fault-cell", "reset:events=x", "--", "true"], "error: fault 'reset': events='x'"),
        ([], "error: give the command to run after --"),
        (["--timeout", "0", "--", "true"], "error: --timeout must be > 0 seconds"),
        (["--report", "m.md", "--", "true"], "error: --report m.md: give the JSON path"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(work: Path, args: list[str], message: str) -> None:
    """Bad sets, expectations, specs and flags: one `error:` line, exit 2, no cell run."""
    done = matrix(work, str(CHAT), "--upstream", UPSTREAM, *args)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), done.stderr
    assert "Traceback" not in done.stderr


def test_the_report_is_valid_json_with_version_1(work: Path, tmp_path: Path) -> None:
    """--report writes {"version": 1, "results": [...]} with one result per cell run."""
    report = tmp_path / "r.json"
    done = matrix(
        work, str(CHAT), "--upstream", UPSTREAM, "--fault-cell", "close:events=1",
        "--report", str(report), "--", str(work / "naive.sh"),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(report.read_text())
    assert doc["version"] == 1
    [result] = doc["results"]
    assert (result["cell"], result["set"], result["outcome"]) == (
        "spec:close:events=1", "spec", "incomplete",
    )  # fmt: skip
    assert result["passed"] is True and result["failure"] == ""


def test_a_command_that_never_reaches_the_replay_is_warned_about_once(work: Path) -> None:
    """A command that sends nothing passes every cell trivially: replay's bypass warning
    says so, once for the run, not once per cell."""
    done = matrix(
        work, str(CHAT), "--upstream", UPSTREAM, "--fault-cell", "reset:events=1",
        "--fault-cell", "close:events=1", "--", "true",
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.count("no request reached replayproxy") == 1, done.stderr
    assert "$REPLAYPROXY_URL" in done.stderr


def test_a_failing_cells_output_is_shown_and_reported(work: Path, tmp_path: Path) -> None:
    """The last lines of a failing cell's command output are printed under its row and its
    last line is the report's failure; -v prints a passing cell's output too."""
    report = tmp_path / "r.json"
    script = 'curl -s -o /dev/null "$REPLAYPROXY_URL/v1/chat/completions"; echo "line one"; '
    done = matrix(
        work, str(CHAT), "--upstream", UPSTREAM, "--fault-cell", "coalesce",
        "--report", str(report), "--", "sh", "-c", script + 'echo "it broke"; exit 3',
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "    | line one\n    | it broke\n" in done.stdout
    [result] = MatrixReport.from_json(report.read_text()).results
    assert result.failure == "expected 0, got exit status 3: it broke"
    quiet = matrix(work, str(CHAT), "--upstream", UPSTREAM, "--fault-cell", "coalesce",
                   "--allow-unmatched", "--", "sh", "-c", script)  # fmt: skip
    assert quiet.returncode == 0 and "| line one" not in quiet.stdout, quiet.stdout
    loud = matrix(work, str(CHAT), "--upstream", UPSTREAM, "--fault-cell", "coalesce",
                  "-v", "--allow-unmatched", "--", "sh", "-c", script)  # fmt: skip
    assert loud.returncode == 0 and "    | line one" in loud.stdout, loud.stdout


def test_sigint_stops_the_run_after_the_current_cell(work: Path, tmp_path: Path) -> None:
    """SIGINT during a cell goes to the command's group; the run stops there (no next cell),
    prints and reports what ran, and exits 130."""
    report = tmp_path / "r.json"
    pids = work / "pids"
    pids.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(BODY=str(work / "body.json"), OUT=str(work / "out.txt"), PIDS=str(pids))
    cmd = [
        *REPLAYPROXY, "matrix", str(CHAT), "--upstream", UPSTREAM, "--report", str(report),
        "--fault-cell", "hang:events=middle", "--fault-cell", "reset:events=1",
        "--", str(work / "hangs.sh"),
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 60
        while not (pids.exists() and len(pids.read_text().split()) == 2):
            assert time.monotonic() < deadline and proc.poll() is None, "the cell never started"
            time.sleep(0.05)
        time.sleep(0.3)  # curl is connected and waiting
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, out + err
    assert "interrupted after 0 of 2 cells" in err
    assert "spec:reset:events=1" not in out
    assert MatrixReport.from_json(report.read_text()).results == ()
    assert not [pid for pid in map(int, pids.read_text().split()) if _alive(pid)]
