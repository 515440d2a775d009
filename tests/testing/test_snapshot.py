"""Stream snapshots by meaning: write, match, mismatch with an event-level diff, update by
argument and by environment, volatile fields ignored, the file layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from replayproxy import ReplayServer
from replayproxy import _store as store
from replayproxy._core.check.contract import parse_contract
from replayproxy._core.wire.sse import parse_events
from replayproxy._errors import UsageError
from replayproxy.testing import capture_url, cassette, stream_interaction
from replayproxy.testing._capture import StreamCapture
from replayproxy.testing._capture_data import CapturedEvent, CapturedFrame
from replayproxy.testing._snapshot import (
    ENV_UPDATE,
    assert_matches_snapshot,
    snapshot_of,
    snapshot_path,
)

URL = "http://127.0.0.1:8000/v1/chat/completions"


def chunk(
    text: str, *, finish: str | None = None, id_: str = "chatcmpl-1", created: int = 1
) -> bytes:
    doc = {
        "id": id_,
        "object": "chat.completion.chunk",
        "created": created,
        "system_fingerprint": f"fp_{created}",
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(doc).encode() + b"\n\n"


def capture_of(
    frames: list[bytes],
    *,
    url: str = URL,
    end: str = "complete",
    closed: bool | None = True,
    content_type: str = "text/event-stream",
) -> StreamCapture:
    """A capture as capture_stream builds it: one frame per read, events by the SSE parser."""
    body = b"".join(frames)
    events = []
    for e in parse_events(body):
        try:
            data = json.loads(e.data)
        except ValueError:
            data = e.data
        name = e.event if e.event != "message" else None
        events.append(CapturedEvent(name, data, e.data, e.id, 10.0 * (e.index + 1)))
    return StreamCapture(
        method="POST",
        url=url,
        status=200,
        headers=httpx.Headers({"content-type": content_type}),
        frames=tuple(CapturedFrame(10.0 * (i + 1), f) for i, f in enumerate(frames)),
        events=tuple(events),
        trailing=b"",
        end=end,
        closed_after_terminal=closed,
    )


def turn(*, finish: str = "stop", id_: str = "chatcmpl-1", created: int = 1) -> StreamCapture:
    return capture_of(
        [
            chunk("Hel", id_=id_, created=created),
            chunk("lo", id_=id_, created=created),
            chunk("", finish=finish, id_=id_, created=created),
            b"data: [DONE]\n\n",
        ]
    )


@pytest.fixture(autouse=True)
def no_update_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_UPDATE, raising=False)


def test_write_then_match(tmp_path: Path) -> None:
    """Updating writes the snapshot; the same stream then matches it."""
    path = tmp_path / "turn.json"
    assert_matches_snapshot(turn(), path, update=True)
    assert path.exists()
    assert_matches_snapshot(turn(), path)


def test_the_file_is_sorted_indented_and_holds_meaning_and_facts(tmp_path: Path) -> None:
    """The snapshot is stable JSON: sorted keys, indented, one entry per event, no volatile
    fields, with the end kind and the structural facts."""
    path = tmp_path / "turn.json"
    assert_matches_snapshot(turn(), path, update=True)
    text = path.read_text()
    doc = json.loads(text)
    assert text == json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert len(doc["events"]) == 4
    assert doc["events"][0] == {
        "type": "chat.completion.chunk",
        "data": {
            "object": "chat.completion.chunk",
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": None}],
        },
    }
    assert {k: doc[k] for k in ("end", "streamed", "terminated_once", "closed_after_terminal")} == {
        "end": "complete",
        "streamed": True,
        "terminated_once": True,
        "closed_after_terminal": True,
    }
    assert "chatcmpl" not in text and "fp_" not in text


def test_a_missing_snapshot_fails_saying_how_to_write_it(tmp_path: Path) -> None:
    """Without a snapshot and not updating: AssertionError naming the file, the flag and the
    environment variable; nothing is written."""
    path = tmp_path / "none.json"
    with pytest.raises(AssertionError) as info:
        assert_matches_snapshot(turn(), path)
    message = str(info.value)
    assert str(path) in message
    assert "--replayproxy-snapshot-update" in message and ENV_UPDATE + "=1" in message
    assert not path.exists()


def test_a_mismatch_shows_the_event_level_diff(tmp_path: Path) -> None:
    """Another finish reason fails with one line naming the event, the field and both values."""
    path = tmp_path / "turn.json"
    assert_matches_snapshot(turn(), path, update=True)
    with pytest.raises(AssertionError) as info:
        assert_matches_snapshot(turn(finish="length"), path)
    message = str(info.value)
    assert 'event 2 (chat.completion.chunk): /choices/0/finish_reason: "stop" → "length"' in message
    assert "1 difference(s)" in message


def test_structural_facts_are_compared(tmp_path: Path) -> None:
    """A buffered body (one frame) left open after [DONE] shows both facts changed."""
    path = tmp_path / "turn.json"
    assert_matches_snapshot(turn(), path, update=True)
    buffered = capture_of([turn().body], closed=False)
    with pytest.raises(AssertionError) as info:
        assert_matches_snapshot(buffered, path)
    assert "streamed: true → false" in str(info.value)
    assert "closed_after_terminal: true → false" in str(info.value)


def test_update_argument_rewrites_a_changed_snapshot(tmp_path: Path) -> None:
    """update=True rewrites a snapshot that differs; the new stream then matches."""
    path = tmp_path / "turn.json"
    assert_matches_snapshot(turn(), path, update=True)
    assert_matches_snapshot(turn(finish="length"), path, update=True)
    assert_matches_snapshot(turn(finish="length"), path)
    assert '"length"' in path.read_text()


def test_environment_variable_updates_when_the_assertion_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """REPLAYPROXY_SNAPSHOT_UPDATE=1, set after import, writes and rewrites snapshots;
    update=False still compares."""
    path = tmp_path / "turn.json"
    monkeypatch.setenv(ENV_UPDATE, "1")
    assert_matches_snapshot(turn(), path)
    assert_matches_snapshot(turn(finish="length"), path)
    with pytest.raises(AssertionError, match="finish_reason"):
        assert_matches_snapshot(turn(), path, update=False)
    monkeypatch.setenv(ENV_UPDATE, "0")
    with pytest.raises(AssertionError, match="finish_reason"):
        assert_matches_snapshot(turn(), path)


def test_two_recordings_with_other_ids_and_times_match(tmp_path: Path) -> None:
    """Two recordings of the same turn, other ids, created times, fingerprints and byte
    splits, match one snapshot."""
    path = tmp_path / "turn.json"
    assert_matches_snapshot(turn(), path, update=True)
    again = turn(id_="chatcmpl-XYZ", created=1799999999)
    resplit = capture_of([again.body[:7], again.body[7:300], again.body[300:]])
    assert_matches_snapshot(again, path)
    assert_matches_snapshot(resplit, path)


def test_ignore_pointers_and_adding_one_later(tmp_path: Path) -> None:
    """The user's pointers are left out; a pointer added later applies to the stored snapshot
    too, so it need not be rewritten."""
    path = tmp_path / "turn.json"
    assert_matches_snapshot(turn(), path, update=True)
    body = turn().body.replace(b"gpt-4o-mini", b"gpt-4o-mini-2")
    other_model = capture_of([body[:50], body[50:]])
    with pytest.raises(AssertionError, match="/model"):
        assert_matches_snapshot(other_model, path, provider="openai-chat")
    assert_matches_snapshot(other_model, path, ignore=["/model", "/missing"], provider="openai")
    with pytest.raises(UsageError, match="ignore: JSON pointer must start with '/'"):
        assert_matches_snapshot(turn(), path, ignore=["model"])


def test_a_contract_names_types_terminal_and_volatile_fields(tmp_path: Path) -> None:
    """With a contract file: its type field is the type, its terminal decides terminated_once,
    and no provider fields are dropped."""
    contract = tmp_path / "turn.toml"
    contract.write_text(
        '[stream]\nframing = "sse"\ntype_field = "kind"\n[events]\nterminal = ["committed"]\n'
    )
    frames = [
        b'data: {"kind": "delta", "id": 1, "text": "a"}\n\n',
        b'data: {"kind": "committed", "id": 2}\n\n',
    ]
    cap = capture_of(frames, url="http://127.0.0.1:9/chat")
    doc = snapshot_of(cap, contract=contract)
    assert [e["type"] for e in doc["events"]] == ["delta", "committed"]
    assert doc["events"][0]["data"]["id"] == 1  # a contract: no provider's volatile fields
    assert doc["terminated_once"] is True
    loaded = parse_contract(contract.read_text(), fmt="toml")
    twice = capture_of([*frames, frames[1]], url="http://127.0.0.1:9/chat")
    assert snapshot_of(twice, contract=loaded)["terminated_once"] is False


def test_terminated_once_is_none_when_no_terminal_is_known() -> None:
    """A generic SSE stream (no provider terminal, no contract): terminated_once is null."""
    cap = capture_of([b"data: x\n\n", b"data: y\n\n"], url="http://127.0.0.1:9/events")
    assert snapshot_of(cap)["terminated_once"] is None


def test_a_name_resolves_beside_the_calling_file() -> None:
    """A bare name: __snapshots__/<module stem>/<name>.json beside the caller; a path with /
    or .json as given; unsafe characters in a name are replaced."""
    here = Path(__file__).resolve()
    assert snapshot_path("turn") == here.parent / "__snapshots__" / here.stem / "turn.json"
    assert snapshot_path("a/b") == Path("a/b")
    assert snapshot_path("b.json") == Path("b.json")
    assert snapshot_path("t[x y]", here).name == "t[x_y].json"
    with pytest.raises(UsageError, match="needs a name"):
        snapshot_path(" ")


def test_the_capture_method_writes_beside_the_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """StreamCapture.assert_matches_snapshot(name) resolves the name beside this file."""
    expected = snapshot_path("capture-method-turn")
    monkeypatch.setenv(ENV_UPDATE, "1")
    try:
        turn().assert_matches_snapshot("capture-method-turn")
        assert expected.exists()
        monkeypatch.delenv(ENV_UPDATE)
        turn(id_="other").assert_matches_snapshot("capture-method-turn")
    finally:
        expected.unlink(missing_ok=True)
        for folder in (expected.parent, expected.parent.parent):
            if folder.exists() and not any(folder.iterdir()):
                folder.rmdir()


def test_an_unreadable_snapshot_is_a_one_line_usage_error(tmp_path: Path) -> None:
    """A snapshot file that is not JSON, or not a snapshot, says so and how to rewrite it."""
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(UsageError, match="cannot be read"):
        assert_matches_snapshot(turn(), path)
    path.write_text('{"events": 3}')
    with pytest.raises(UsageError, match="'events' must be a list"):
        assert_matches_snapshot(turn(), path)


def replayed(tmp_path: Path, name: str, *, finish: str = "stop", **ids: Any) -> StreamCapture:
    """A capture, over a real socket, of a ReplayServer serving one recorded turn."""
    events = [
        chunk("Hel", **ids),
        chunk("lo", **ids),
        chunk("", finish=finish, **ids),
        b"data: [DONE]\n\n",
    ]
    path = tmp_path / f"{name}.cassette"
    store.save(path, cassette(stream_interaction("openai-chat-text", events=events, body=b"{}")))
    with ReplayServer(path, speed=1) as server:
        return capture_url("POST", server.url + "/v1/chat/completions", json={}, timeout=10)


def test_two_replayed_recordings_match_over_a_real_socket(tmp_path: Path) -> None:
    """capture_url of two recordings (other ids, created) served by ReplayServer: one snapshot
    matches both; a third with another finish reason fails with the field and both values."""
    path = tmp_path / "snap.json"
    first = replayed(tmp_path, "a", id_="chatcmpl-a", created=1)
    assert_matches_snapshot(first, path, update=True)
    assert json.loads(path.read_text())["streamed"] is True
    assert_matches_snapshot(replayed(tmp_path, "b", id_="chatcmpl-b", created=2), path)
    with pytest.raises(AssertionError, match='finish_reason: "stop" → "length"'):
        assert_matches_snapshot(replayed(tmp_path, "c", finish="length"), path)
