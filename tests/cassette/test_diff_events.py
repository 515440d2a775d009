"""``replayproxy cassette diff --events``: two recordings of the same turn show nothing, a
changed finish reason one line with both values; exit 1 when they differ, 0 when not."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from replayproxy import _store as store
from replayproxy import use_cassette
from replayproxy._cli import cli
from replayproxy._harness.hosts import HostPool
from replayproxy.testing import Simulator, cassette, stream_interaction

BODY = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


def rp(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def pool() -> Iterator[HostPool]:
    p = HostPool()
    yield p
    p.close()


def record(path: Path, pool: HostPool, confdir: Path) -> None:
    """Record one chat turn from a simulator of its own (its own port) into ``path``."""
    with (
        Simulator() as sim,
        use_cassette(
            path, upstream=sim.url, record_mode="once", pool=pool, confdir=str(confdir)
        ) as use,
    ):
        response = httpx.post(use.url + "/v1/chat/completions", json=BODY, timeout=30)
        assert response.status_code == 200


def chunk(i: int, *, finish: str | None, id_: str, created: int) -> bytes:
    doc = {
        "id": id_,
        "object": "chat.completion.chunk",
        "created": created,
        "system_fingerprint": f"fp_{created}",
        "choices": [{"index": 0, "delta": {"content": f"w{i}"}, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(doc).encode() + b"\n\n"


def built(path: Path, *, finish: str = "stop", id_: str = "chatcmpl-a", created: int = 1,
          gap_ms: float = 20) -> Path:  # fmt: skip
    events = [chunk(i, finish=None, id_=id_, created=created) for i in range(3)]
    events += [chunk(3, finish=finish, id_=id_, created=created), b"data: [DONE]\n\n"]
    store.save(path, cassette(stream_interaction("openai-chat-text", events=events, gap_ms=gap_ms)))
    return path


def test_two_recordings_from_the_simulator_show_no_differences(
    tmp_path: Path, pool: HostPool
) -> None:
    """The same turn recorded twice (other ports, dates, timing): plain diff --ignore-timing
    shows headers, diff --events nothing, exit 0."""
    a, b = tmp_path / "a.cassette", tmp_path / "b.cassette"
    record(a, pool, tmp_path / "mitmproxy")
    record(b, pool, tmp_path / "mitmproxy")
    code, out, _ = rp("cassette", "diff", "--events", str(a), str(b))
    assert (code, out) == (0, "")
    assert rp("cassette", "diff", "--ignore-timing", str(a), str(b))[0] == 1


def test_other_ids_created_and_timing_show_no_differences(tmp_path: Path) -> None:
    """Other ids, created times, fingerprints and gaps: no difference by meaning."""
    a = built(tmp_path / "a.cassette")
    b = built(tmp_path / "b.cassette", id_="chatcmpl-b", created=99, gap_ms=75)
    assert rp("cassette", "diff", "--events", str(a), str(b))[:2] == (0, "")


def test_a_changed_finish_reason_shows_one_line_with_both_values(tmp_path: Path) -> None:
    """One changed field: exactly one line naming the interaction, event, field and values."""
    a = built(tmp_path / "a.cassette")
    b = built(tmp_path / "b.cassette", finish="length", id_="chatcmpl-b")
    code, out, _ = rp("cassette", "diff", "--events", str(a), str(b))
    assert code == 1
    assert out.splitlines() == [
        "interaction 0/0 POST /v1/chat/completions: event 3 (chat.completion.chunk): "
        '/choices/0/finish_reason: "stop" → "length"'
    ]


def test_json_output_and_ignore(tmp_path: Path) -> None:
    """--json lists the difference with both values; --ignore leaves a pointer out."""
    a = built(tmp_path / "a.cassette")
    b = built(tmp_path / "b.cassette", finish="length")
    code, out, _ = rp("cassette", "diff", "--events", "--json", str(a), str(b))
    [d] = json.loads(out)
    assert (code, d["level"], d["a"], d["b"]) == (1, "event", '"stop"', '"length"')
    ignored = rp(
        "cassette", "diff", "--events", "--ignore", "/choices/*/finish_reason", str(a), str(b)
    )
    assert ignored[:2] == (0, "")


def test_ignore_without_events_is_a_usage_error(tmp_path: Path) -> None:
    """--ignore only means something with --events: a one-line error says so."""
    a = built(tmp_path / "a.cassette")
    result = CliRunner().invoke(cli, ["cassette", "diff", "--ignore", "/id", str(a), str(a)])
    assert result.exit_code == 2
    assert "--ignore needs --events" in result.output
