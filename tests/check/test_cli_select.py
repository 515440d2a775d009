"""``replayproxy check CASSETTE -i N / --path GLOB`` selects interactions; under ``--contract``
a non-stream interaction is skipped, not an error; ``--stdin --content-encoding`` decodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from replayproxy import _store as store
from replayproxy._cli import cli
from replayproxy.testing import _builders as builders
from tests.check.contract_cases import EXAMPLES, sse_events
from tests.check.recording_cases import buffered_frames, compress_whole, recording, streamed_frames

CONTRACT = str(EXAMPLES / "chat-turn.contract.toml")


def run(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["check", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def app_cassette(tmp_path: Path) -> Path:
    """An endpoint session: GET /api/turns (JSON), POST /api/chat streamed, POST /api/chat
    buffered behind gzip, POST /api/chat cut before its terminal event."""
    turns = builders.interaction(
        [b'[{"turn_id":"t_8f2c41"}]'],
        request=builders.request("GET", "http://app.invalid/api/turns", body=b""),
        headers=builders.JSON_HEADERS,
    )
    events = sse_events()
    path = tmp_path / "app.cassette"
    store.save(
        path,
        builders.cassette(
            turns,
            recording(streamed_frames(None, events)),
            recording(buffered_frames("gzip", events), "gzip"),
            recording(streamed_frames(None, events[:-1])),
        ),
    )
    return path


def test_a_json_interaction_is_skipped_under_a_contract(app_cassette: Path) -> None:
    """The issue's case: GET /turns under --contract is "skipped (...)", not 3 errors; the
    exit status comes from the streams only."""
    code, out, _ = run("--contract", CONTRACT, str(app_cassette), "-i", "0", "-i", "1")
    assert code == 0, out
    lines = out.splitlines()
    assert lines[1] == (
        "  #0 GET http://app.invalid/api/turns  -  skipped (application/json: not a "
        "text/event-stream response (the contract's sse framing))"
    )
    assert lines[2].startswith("  #1 POST http://app.invalid/api/chat  contract  ok")
    assert len(lines) == 3


def test_i_selects_interactions_and_keeps_their_indexes(app_cassette: Path, tmp_path: Path) -> None:
    """-i 3 checks only the cut stream (exit 1, its index kept); -i 2 the gzip-buffered one,
    which an incremental contract reports as compressed and buffered."""
    incremental = tmp_path / "incremental.contract.toml"
    text = Path(CONTRACT).read_text()
    incremental.write_text(text.replace('framing = "sse"', 'framing = "sse"\nincremental = true'))
    code, out, _ = run("--contract", CONTRACT, str(app_cassette), "-i", "3")
    assert code == 1
    assert "  #3 POST" in out and "#1" not in out and "error contract.terminal" in out
    code, out, _ = run("--contract", str(incremental), str(app_cassette), "-i", "2", "--json")
    assert code == 1
    (interaction,) = json.loads(out)["cassettes"][0]["interactions"]
    assert interaction["index"] == 2
    assert {v["rule"]: v["severity"] for v in interaction["violations"]} == {
        "http.compressed-stream": "warning",
        "stream.buffered": "error",
    }


def test_path_selects_by_request_path_glob(app_cassette: Path) -> None:
    """--path '/api/turns' selects the JSON interaction only (skipped: exit 0); --path
    '*/chat' the three streams (one cut: exit 1)."""
    code, out, _ = run("--contract", CONTRACT, str(app_cassette), "--path", "/api/turns")
    assert code == 0 and out.count("  #") == 1 and "skipped" in out
    code, out, _ = run("--contract", CONTRACT, str(app_cassette), "--path", "*/chat")
    assert code == 1 and [line.split()[0] for line in out.splitlines()[1:] if "  #" in line] == [
        "#1",
        "#2",
        "#3",
    ]
    code, out, _ = run("--contract", CONTRACT, str(app_cassette), "--path", "*/chat", "-i", "1")
    assert code == 0 and out.count("  #") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-i", "9"], "interaction 9 is not in "),
        (["--path", "/nothing*"], "--path '/nothing*' selects no interaction of "),
        (["-i", "-1"], "-1 is not in the range x>=0"),
    ],
)
def test_a_selection_of_nothing_is_a_usage_error(
    app_cassette: Path, args: list[str], message: str
) -> None:
    """An index the cassette lacks, or a glob that matches nothing, is exit 2 in one line."""
    code, _, err = run("--contract", CONTRACT, str(app_cassette), *args)
    assert code == 2 and message in err


def test_selection_is_for_cassettes_not_stdin() -> None:
    """-i/--path with --stdin, and --content-encoding without it, are usage errors."""
    code, _, err = run("--stdin", "--contract", CONTRACT, "-i", "0", stdin=b"")
    assert code == 2 and "not --stdin" in err
    code, _, err = run("--content-encoding", "gzip", "x.cassette")
    assert code == 2 and "--content-encoding is for --stdin" in err


def test_stdin_with_a_content_encoding_is_decoded() -> None:
    """A gzip'd captured body with --content-encoding gzip: the compression warning only;
    without it, the bytes are not SSE."""
    body = b"".join(compress_whole("gzip", sse_events()))
    code, out, _ = run("--stdin", "--contract", CONTRACT, "--content-encoding", "gzip", stdin=body)
    assert code == 0
    assert out.splitlines()[1].startswith("warning http.compressed-stream at byte 0: ")
    code, out, _ = run("--stdin", "--contract", CONTRACT, stdin=body)
    assert code == 1 and "sse.utf8" in out


def test_a_compressed_body_without_its_coding_is_named_in_a_note() -> None:
    """A gzip'd body given without --content-encoding still breaks the SSE rules (they see
    noise), and the report notes the gzip magic bytes and the flag that decodes them."""
    body = b"".join(compress_whole("gzip", sse_events()))
    code, out, _ = run("--stdin", "--contract", CONTRACT, stdin=body)
    assert code == 1
    assert out.splitlines()[1] == (
        "note: the body starts with gzip's magic bytes (1f 8b 08): it is probably "
        "gzip-compressed; give its Content-Encoding (--content-encoding, content_encoding=) to "
        "check the stream inside"
    )
