"""``replayproxy cassette edit --set-event-field``: the edited recording replays to the openai
SDK with the new finish reason; -i selects; errors are one line; diff --events shows the edit."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest
from click.testing import CliRunner

from replayproxy import ReplayServer
from replayproxy import _store as store
from replayproxy._cli import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "cassettes" / "openai-chat-text.cassette"
LAST_CHUNK = 160  # the chunk carrying finish_reason "stop" (event 161: usage, 162: [DONE])

pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="example cassette not present")


def rp(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def finish_reasons(path: Path) -> list[str]:
    """What the openai SDK reads from a replay of ``path``: every finish_reason it gets."""
    with ReplayServer(path, speed=0) as server:
        client = openai.OpenAI(base_url=server.url + "/v1", api_key="x", max_retries=0, timeout=30)
        stream = client.chat.completions.create(
            model="gpt-4.1-nano",
            messages=[{"role": "user", "content": "Invent a new holiday and describe it."}],
            stream=True,
            stream_options={"include_usage": True},
        )
        return [c.finish_reason for chunk in stream for c in chunk.choices if c.finish_reason]


def test_the_openai_sdk_reads_the_new_finish_reason(tmp_path: Path) -> None:
    """Setting /choices/0/finish_reason of the last chunk to "length": the SDK sees "length";
    frames and times are those recorded; diff --events shows exactly that one field."""
    out = tmp_path / "length.cassette"
    code, output = rp(
        "cassette", "edit", str(EXAMPLE), "-o", str(out), "-i", "0",
        "--set-event-field", str(LAST_CHUNK), "/choices/0/finish_reason", '"length"',
    )  # fmt: skip
    assert code == 0, output
    assert finish_reasons(EXAMPLE) == ["stop"]
    assert finish_reasons(out) == ["length"]
    before, after = store.load(EXAMPLE).interactions[0], store.load(out).interactions[0]
    assert [f.offset_ns for f in after.frames] == [f.offset_ns for f in before.frames]
    code, output = rp("cassette", "diff", "--events", str(EXAMPLE), str(out))
    assert (code, output.splitlines()) == (1, [
        "interaction 0/0 POST /v1/chat/completions: event 160 (chat.completion.chunk): "
        '/choices/0/finish_reason: "stop" → "length"'
    ])  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["999", "/choices/0/finish_reason", '"length"'], "no event 999 (the stream has 163"),
        ([str(LAST_CHUNK), "/choices/1/finish_reason", '"x"'], "has no /choices/1"),
        ([str(LAST_CHUNK), "/choices/0/finish_reason", "length"], "the value is not JSON"),
        (["162", "/x", "1"], "event 162 (message) is not JSON ('[DONE]')"),
    ],
)
def test_errors_are_one_line_and_write_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    """Each bad target or value: exit 2, one line naming it, no output file."""
    out = tmp_path / "out.cassette"
    code, output = rp("cassette", "edit", str(EXAMPLE), "-o", str(out), "--set-event-field", *args)
    assert code == 2
    assert message in output
    assert not out.exists()
