"""``replayproxy cassette ...`` as a user runs it: output, round trips, edits, errors, git."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from replayproxy import _store as store
from replayproxy._cli import cli
from replayproxy._core.cassette.model import Cassette
from replayproxy.testing.strategies import cassettes
from tests.cassette.samples import SSE_EVENTS, demo_cassette, sample_cassette

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "cassettes").glob("*.cassette"))
REPLAYPROXY = [sys.executable, "-c", "from replayproxy._cli import main; main()"]
examples = pytest.mark.parametrize(
    "example",
    EXAMPLES or [pytest.param(None, marks=pytest.mark.skip(reason="no cassettes/*.cassette yet"))],
    ids=[p.name for p in EXAMPLES] or None,
)


def rp(*args: str, input: str | None = None) -> tuple[int, str, str]:
    """Run the CLI in-process; return exit code, stdout, stderr."""
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    path = tmp_path / "sample.cassette"
    store.save(path, sample_cassette())
    return path


@examples
def test_export_import_round_trips_every_example_byte_identically(
    example: Path, tmp_path: Path
) -> None:
    """export then import gives back the example cassette's exact bytes."""
    code, text, err = rp("cassette", "export", str(example))
    assert code == 0, err
    (tmp_path / "c.txt").write_text(text, encoding="utf-8")
    out = tmp_path / "back.cassette"
    assert rp("cassette", "import", str(tmp_path / "c.txt"), "-o", str(out))[0] == 0
    assert out.read_bytes() == example.read_bytes()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cassettes())
def test_export_import_round_trips_generated_cassettes(c: Cassette) -> None:
    """Any cassette (binary bytes, empty bodies, resets, many interactions) survives the CLI."""
    with tempfile.TemporaryDirectory() as d:
        src, back = Path(d) / "a.cassette", Path(d) / "b.cassette"
        store.save(src, c)
        code, text, _ = rp("cassette", "export", str(src))
        assert code == 0
        assert rp("cassette", "import", "-", "-o", str(back), input=text)[0] == 0
        assert back.read_bytes() == src.read_bytes()


def test_show_lists_one_line_per_interaction(sample: Path) -> None:
    """show prints a header and one row per interaction; --json gives the same rows."""
    code, out, _ = rp("cassette", "show", str(sample))
    lines = out.splitlines()
    assert code == 0 and len(lines) == 4
    assert lines[1].split()[:7] == ["0", "POST", "https://api.example.test/v1/chat/completions",
                                    "200", "1.1", "4", "101"]  # fmt: skip
    assert lines[3].split()[3:6] == ["-", "1.1", "0"]
    assert "no_response (connection refused)" in lines[3]
    rows = json.loads(rp("cassette", "show", str(sample), "--json")[1])
    assert [r["end"] for r in rows] == ["complete", "complete", "no_response"]
    assert [r["http_version"] for r in rows] == ["HTTP/1.1"] * 3


def test_frames_prints_offsets_gaps_sizes_and_escaped_bytes(sample: Path) -> None:
    """frames -i 1 shows each frame; the split UTF-8 character is escaped, not mangled."""
    code, out, _ = rp("cassette", "frames", str(sample), "-i", "1")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("interaction 1: POST") and "3 frames, 101 bytes" in lines[0]
    assert lines[3].split()[:5] == ["1", "90.000ms", "+20.000ms", "38", "41"]
    assert lines[3].endswith('" w\\xc3')
    data = json.loads(rp("cassette", "frames", str(sample), "-i", "1", "--json")[1])
    assert data[0]["frames"][2]["base64"] == "qXJsZCJ9CgpkYXRhOiBbRE9ORV0KCg=="


def test_events_show_where_frame_boundaries_cut_events(sample: Path) -> None:
    """events marks events split across frames with their frame range and a │ at the cut."""
    code, out, _ = rp("cassette", "events", str(sample), "-i", "1", "-i", "2")
    assert code == 0
    assert "(4 events, 2 split)" in out
    (line,) = [ln for ln in out.splitlines() if '"n"│:1' in ln]
    assert line.split()[:5] == ["1", "28-55", "0-1", "90.000ms", "message"]
    assert line.endswith('data: {"n"│:1,"text":"lo"}\\n\\n')
    assert "interaction 2: GET https://api.example.test/v1/models (no events:" in out
    data = json.loads(rp("cassette", "events", str(sample), "--json", "-i", "1")[1])
    utf8_cut = SSE_EVENTS[2].index(b"\xc3") + 1
    assert [e["cuts"] for e in data[0]["events"]] == [[], [10], [utf8_cut], []]
    assert [base64.b64decode(e["base64"]) for e in data[0]["events"]] == SSE_EVENTS


def test_edit_writes_a_new_file_and_protects_the_input(sample: Path, tmp_path: Path) -> None:
    """edit -o writes the result; the input is kept; -o INPUT needs --in-place."""
    before = sample.read_bytes()
    out = tmp_path / "out.cassette"
    code, _, err = rp("cassette", "edit", str(sample), "-o", str(out), "-i", "0",
                      "--drop-event", "1", "--end", "reset")  # fmt: skip
    assert code == 0, err
    assert sample.read_bytes() == before
    edited = store.load(out).interactions[0]
    assert edited.response is not None and edited.response.body == b"".join(
        SSE_EVENTS[i] for i in (0, 2, 3)
    )
    assert edited.end.kind.value == "reset"
    code, _, err = rp("cassette", "edit", str(sample), "-o", str(sample), "--speed", "2")
    assert code == 2 and "pass --in-place" in err and sample.read_bytes() == before
    assert rp("cassette", "edit", str(sample), "--in-place", "--fault", "hang")[0] == 0
    assert store.load(sample).interactions[0].faults == ("hang",)


def test_import_refuses_to_overwrite_without_the_flag(sample: Path, tmp_path: Path) -> None:
    """import -o EXISTING fails unless --overwrite."""
    text = rp("cassette", "export", str(sample))[1]
    code, _, err = rp("cassette", "import", "-", "-o", str(sample), input=text)
    assert code == 2 and "already exists" in err
    assert rp("cassette", "import", "-", "-o", str(sample), "--overwrite", input=text)[0] == 0


def test_diff_exits_1_and_lists_differences(sample: Path, tmp_path: Path) -> None:
    """diff A B prints the frame and event differences and exits 1; equal files exit 0."""
    other = tmp_path / "other.cassette"
    rp("cassette", "edit", str(sample), "-o", str(other), "-i", "0", "--drop-event", "1")
    code, out, _ = rp("cassette", "diff", str(sample), str(other))
    assert code == 1
    assert "interaction 0/0 POST /v1/chat/completions: event 1:" in out
    assert '  - \'data: {"n":1,"text":"lo"}\\n\\n\'\n  + (absent)' in out
    assert rp("cassette", "diff", str(sample), str(sample)) == (0, "", "")
    found = json.loads(rp("cassette", "diff", str(sample), str(other), "--json")[1])
    assert {d["level"] for d in found} == {"frame", "event"}


def test_diff_ignore_timing_and_tolerance_on_a_rerecording(tmp_path: Path) -> None:
    """--ignore-timing shrinks a jittered, re-split re-recording to one line; --time-tolerance
    hides jitter within it; both still exit 1 on a real difference, 0 without one."""
    from tests.core.tools.test_diff import rerecorded

    a = ROOT / "cassettes" / "openai-chat-text.cassette"
    b, c = tmp_path / "b.cassette", tmp_path / "c.cassette"
    store.save(b, rerecorded(store.load(a), 3_000_000, seed=3, resplit=True))
    store.save(c, rerecorded(store.load(a), 3_000_000, seed=3))
    code, out, _ = rp("cassette", "diff", str(a), str(b))
    assert code == 1 and len(out.splitlines()) > 100
    code, out, _ = rp("cassette", "diff", str(a), str(b), "--ignore-timing")
    assert code == 1
    assert out.splitlines()[0].endswith("frame splits (same bytes):")
    assert len(out.splitlines()) == 3 + 5 + 1  # the splits, five places, the count of the rest
    assert rp("cassette", "diff", str(a), str(c), "--time-tolerance", "3") == (0, "", "")
    assert rp("cassette", "diff", str(a), str(c), "--time-tolerance", "0.5")[0] == 1
    code, _, err = rp("cassette", "diff", str(a), str(c), "--time-tolerance", "-1")
    assert code == 2 and "-1" in err


def test_diff_output_line_by_line_on_a_real_cassette(tmp_path: Path) -> None:
    """A re-split and a changed header of the shipped stream, as printed: one line per
    re-split place with both body offsets, one block per changed header, nothing else."""
    a = ROOT / "cassettes" / "openai-chat-text.cassette"
    b = tmp_path / "b.cassette"
    rp("cassette", "edit", str(a), "-o", str(b), "--merge", "3-4", "--redact-header", "server")
    (x,) = store.load(a).interactions
    assert x.response is not None
    ends = [sum(len(f.data) for f in x.response.frames[: i + 1]) for i in range(5)]
    code, out, _ = rp("cassette", "diff", str(a), str(b), "--ignore-timing")
    at = "interaction 0/0 POST /v1/chat/completions"
    n = len(x.response.frames)
    assert code == 1
    assert out.splitlines() == [
        f"{at}: response header server:",
        "  - cloudflare",
        "  + <redacted>",
        f"{at}: frame splits (same bytes):",
        f"  - {n} frames",
        f"  + {n - 1} frames",
        f"{at}: frame 3 ends at body offset {ends[3]} in A, {ends[4]} in B",
    ]


@examples
def test_plot_is_valid_svg_for_every_example(example: Path, tmp_path: Path) -> None:
    """plot writes a well-formed SVG with a lane label per interaction."""
    out = tmp_path / "t.svg"
    assert rp("cassette", "plot", str(example), "-o", str(out))[0] == 0
    root = ET.parse(out).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    count = len(store.load(example).interactions)
    assert sum(1 for t in texts if t.startswith("#")) == count


def test_plot_marks_every_ending(tmp_path: Path) -> None:
    """The demo session's plot has a clean end, a reset cross and a hang line, and parses."""
    src, out = tmp_path / "demo.cassette", tmp_path / "demo.svg"
    store.save(src, demo_cassette())
    assert rp("cassette", "plot", str(src), "-o", str(out), "--title", "demo")[0] == 0
    svg = out.read_text()
    ET.fromstring(svg)
    assert "<title>clean end</title>" in svg and "<title>reset</title>" in svg
    assert "<title>hang</title>" in svg and svg.count("<title>frame ") == 50


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "{missing}"], "error: {missing}: no such cassette file"),
        (["show", "{corrupt}"], "error: {corrupt} at byte 0: not a replayproxy cassette"),
        (["edit", "{sample}", "-o", "{out}", "--truncate", "events=x"],
         "error: bad position 'events=x': not a valid number"),
        (["edit", "{sample}", "-o", "{out}", "--split", "lines=3"], "error: bad position"),
        (["frames", "{sample}", "-i", "9"], "error: no interaction 9"),
        (["import", "{corrupt}", "-o", "{out}"], "error: {corrupt}: line 1: not a cassette text"),
    ],
)  # fmt: skip
def test_cli_errors_are_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    """Missing files, corrupt cassettes and bad positions give one 'error:' line, exit 2."""
    paths = {
        "missing": str(tmp_path / "missing.cassette"),
        "corrupt": str(tmp_path / "corrupt.cassette"),
        "sample": str(tmp_path / "s.cassette"),
        "out": str(tmp_path / "o.cassette"),
    }
    Path(paths["corrupt"]).write_bytes(b"not a cassette\n")
    store.save(paths["sample"], sample_cassette())
    code, _, err = rp("cassette", *(a.format(**paths) for a in args))
    assert code == 2
    assert len(err.splitlines()) == 1
    assert err.startswith(message.format(**paths))


def test_errors_reach_a_real_process_as_one_line(tmp_path: Path) -> None:
    """Run as a process, a missing cassette gives exit status 2 and one stderr line."""
    missing = tmp_path / "missing.cassette"
    done = subprocess.run(
        [*REPLAYPROXY, "cassette", "show", str(missing)], capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == f"error: {missing}: no such cassette file\n"
    assert done.stdout == ""


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_diff_shows_readable_cassette_changes(tmp_path: Path) -> None:
    """With the textconv driver configured, git diff shows the changed frame as text."""
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=repo, env=env, check=True, timeout=60,
                              capture_output=True, text=True).stdout  # fmt: skip

    git("init", "-q")
    git("config", "user.email", "t@example.test")
    git("config", "user.name", "t")
    driver = " ".join(f"'{a}'" for a in REPLAYPROXY) + " cassette textconv"
    git("config", "diff.replayproxy.textconv", driver)
    (repo / ".gitattributes").write_text("*.cassette diff=replayproxy\n")
    store.save(repo / "chat.cassette", sample_cassette())
    git("add", ".")
    git("commit", "-q", "-m", "record")
    rp("cassette", "edit", str(repo / "chat.cassette"), "--in-place", "-i", "0",
       "--drop-event", "1")  # fmt: skip
    out = git("diff")
    assert "Binary files" not in out
    assert '-  +90ms       \'data: {"n":1,"text":"lo"}\\n\\n\'' in out
    assert "+  +90ms" not in out  # only the dropped frame's line changed
