"""``replayproxy check``: cassettes, --stdin, --json, --strict, --fault and exit statuses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from replayproxy._cli import cli
from replayproxy._core.check import RULES
from tests.check.cases import CASES, base_body

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = sorted((ROOT / "cassettes").glob("*.cassette"))
needs_cassettes = pytest.mark.skipif(not CASSETTES, reason="no example cassettes yet")


def run(*args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["check", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


@needs_cassettes
def test_example_cassettes_exit_0() -> None:
    """Clean cassettes exit 0 and print one line per interaction."""
    code, out, _ = run(*map(str, CASSETTES))
    assert code == 0, out
    assert out.count("  #0 POST ") == len(CASSETTES)


@needs_cassettes
def test_fault_makes_the_check_fail_with_exit_1() -> None:
    """--fault truncate makes an Anthropic cassette fail: exit 1, rule id in the output."""
    path = ROOT / "cassettes" / "anthropic-text.cassette"
    code, out, _ = run(str(path), "--fault", "truncate")
    assert code == 1
    assert "error anthropic.message-stop-last at byte" in out


@needs_cassettes
def test_json_report() -> None:
    """--json prints one JSON document with every interaction and violation."""
    path = ROOT / "cassettes" / "anthropic-text.cassette"
    code, out, _ = run(str(path), "--json", "--fault", "drop:event=1")
    assert code == 1
    doc = json.loads(out)
    (cassette,) = doc["cassettes"]
    (interaction,) = cassette["interactions"]
    assert interaction["provider"] == "anthropic" and interaction["skipped"] is None
    rules = {v["rule"] for v in interaction["violations"]}
    assert rules == {"anthropic.block-nesting"}
    assert {"severity", "event", "offset", "message"} <= set(interaction["violations"][0])


def test_stdin_with_provider() -> None:
    """--stdin checks a raw body: exit 0 when clean, 1 with the violations listed."""
    assert run("--stdin", "--provider", "anthropic", stdin=base_body("anthropic-text"))[:2] == (
        0,
        "dialect: Anthropic\nok\n",
    )
    code, out, _ = run("--stdin", "--provider", "anthropic", stdin=CASES["sse.bom"].body)
    assert code == 1 and out.splitlines()[1].startswith("error sse.bom at event 0, byte 0: ")


def test_stdin_url_request_and_json(tmp_path: Path) -> None:
    """--url detects the provider, --request supplies include_usage, --json prints violations."""
    body = CASES["openai.chat.usage-chunk"].body
    url = "https://api.openai.com/v1/chat/completions"
    req = tmp_path / "req.json"
    req.write_text('{"stream_options": {"include_usage": true}}')
    result = CliRunner().invoke(
        cli, ["check", "--stdin", "--url", url, "--request", str(req), "--json"], input=body
    )
    assert result.exit_code == 1
    assert [v["rule"] for v in json.loads(result.stdout)["violations"]] == [
        "openai.chat.usage-chunk"
    ]


def test_strict_fails_on_warnings() -> None:
    """Warnings exit 0 unless --strict."""
    body = CASES["gemini.crlf"].body
    assert run("--stdin", "--provider", "gemini", stdin=body)[0] == 0
    assert run("--stdin", "--provider", "gemini", "--strict", stdin=body)[0] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--stdin"], "cannot tell which provider"),
        (["--stdin", "--provider", "watsonx"], "unknown provider 'watsonx'"),
        ([], "give CASSETTE paths, or --stdin"),
        (["missing.cassette"], "missing.cassette: no such cassette file"),
        (["--stdin", "x.cassette"], "give CASSETTE paths, or --stdin"),
    ],
)
def test_usage_errors_are_one_line_exit_2(args: list[str], message: str) -> None:
    """Bad usage prints one 'error: ...' line and exits 2."""
    code, _, err = run(*args, stdin=b"data: 1\n\n")
    assert code == 2
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_list_rules() -> None:
    """--list-rules prints every rule id with its severity and summary, and under it the
    client behaviour behind its grade."""
    code, out, _ = run("--list-rules")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[::2]] == list(RULES)
    assert [line.strip() for line in lines[1::2]] == [r.why for r in RULES.values()]
    assert all(line.startswith("    ") for line in lines[1::2])


def test_installed_entry_point() -> None:
    """The real `replayproxy check` process reads stdin and exits 1 on a truncated stream."""
    exe = Path(sys.executable).with_name("replayproxy")
    proc = subprocess.run(
        [str(exe), "check", "--stdin", "--provider", "openai-chat"],
        input=CASES["openai.chat.done-last"].body,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    assert b"error openai.chat.done-last at byte" in proc.stdout


@needs_cassettes
def test_torn_and_corrupt_cassettes(tmp_path: Path) -> None:
    """A torn tail is a warning line and the rest is checked; a corrupt file is exit 2."""
    from replayproxy import _store as store

    torn = tmp_path / "torn.cassette"
    torn.write_bytes((ROOT / "cassettes" / "anthropic-text.cassette").read_bytes())
    writer = store.CassetteWriter(torn, mode="append")
    writer.append(store.load(torn).interactions[0])
    writer.close()
    torn.write_bytes(torn.read_bytes()[:-20])
    code, out, err = run(str(torn))
    assert code == 0 and "anthropic  ok" in out
    assert err.startswith("warning: ") and "torn tail" in err
    bad = tmp_path / "bad.cassette"
    bad.write_bytes(b"garbage")
    code, _, err = run(str(bad))
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1


def test_stdin_names_the_dialect_and_its_notes() -> None:
    """The report names the dialect from the URL and lists the known provider habits it saw."""
    from tests.check.corpus_streams import load_corpus

    (groq,) = [s for s in load_corpus() if s.name == "groq-tool-call.jsonl"]
    code, out, _ = run(
        "--stdin", "--url", "https://api.groq.com/openai/v1/chat/completions", stdin=groq.body
    )
    assert code == 0
    assert out.splitlines() == [
        "dialect: OpenAI-compatible (Groq)",
        "note: usage on the finish_reason chunk, as DeepSeek, Groq and Mistral send",
        "ok",
    ]
    code, out, _ = run("--stdin", "--provider", "openai", "--json", stdin=groq.body)
    doc = json.loads(out)
    assert doc["dialect"] == "OpenAI-compatible (Groq)" and doc["provider"] == "openai-chat"
    assert doc["notes"] and doc["violations"] == []


def test_contract_from_stdin_and_exit_statuses(tmp_path: Path) -> None:
    """--contract checks an application stream: exit 0 when it keeps the contract, 1 when it
    breaks it, 3 for a bad contract file, 2 for --contract with --provider."""
    examples = ROOT / "docs" / "examples"
    contract = str(examples / "chat-turn.contract.toml")
    body = (examples / "chat-turn.sse").read_bytes()
    assert run("--stdin", "--contract", contract, stdin=body)[:2] == (
        0,
        "dialect: contract chat turn\nok\n",
    )
    cut = body[: body.rindex(b"event: committed")]
    code, out, _ = run("--stdin", "--contract", contract, "--json", stdin=cut)
    assert code == 1
    assert [v["rule"] for v in json.loads(out)["violations"]] == ["contract.terminal"]
    bad = tmp_path / "bad.toml"
    bad.write_text("[events]\norder = 'a ('\n")
    code, _, err = run("--stdin", "--contract", str(bad), stdin=body)
    assert code == 3 and err.startswith("error: ") and "ends where an event name" in err
    assert err.count("\n") == 1
    code, _, err = run("--stdin", "--contract", contract, "--provider", "sse", stdin=body)
    assert code == 2 and "not both" in err


def test_non_stream_content_type_says_so() -> None:
    """--stdin with a JSON content type and no provider explains that it is not a stream."""
    code, _, err = run("--stdin", "--content-type", "application/json", stdin=b"{}")
    assert code == 2 and "is not an event stream" in err and err.count("\n") == 1
