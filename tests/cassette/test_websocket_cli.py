"""`cassette show`, `events`, `export`/`import`, `plot` and `check` on a WebSocket session."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette
from replayproxy._core.cassette.websocket import WsMessage
from replayproxy.testing import realtime_turns, ws_interaction
from tests.cassette.samples import sse_interaction
from tests.cassette.test_cli import rp


@pytest.fixture
def ws_cassette(tmp_path: Path) -> Path:
    path = tmp_path / "ws.cassette"
    msgs = [*realtime_turns(deltas=2), WsMessage(400_000_000, True, False, b"\x00\xff", (1, 1))]
    store.save(path, Cassette((sse_interaction(), ws_interaction(msgs))))
    return path


def test_show_counts_messages_and_says_how_the_session_ended(ws_cassette: Path) -> None:
    """show: the WebSocket row has 101, its message count and bytes, and its close."""
    code, out, _ = rp("cassette", "show", ws_cassette.as_posix(), "--json")
    assert code == 0
    row = json.loads(out)[1]
    assert (row["status"], row["frames"], row["end"]) == (101, 9, "ws close 1000 by client")
    assert row["duration_ns"] == 401_000_000


def test_events_lists_messages_with_the_delay_replay_keeps(ws_cassette: Path) -> None:
    """events: one row per message; a server reply's AFTER is measured from the client
    message it answers (response.created: 100 ms after response.create)."""
    code, out, _ = rp("cassette", "events", ws_cassette.as_posix(), "-i", "1")
    assert code == 0
    created = next(line for line in out.splitlines() if "response.created" in line)
    assert "+100.000ms" in created and "server" in created
    assert "binary 2 frames" in out
    code, out, _ = rp("cassette", "events", ws_cassette.as_posix(), "-i", "1", "--json")
    (doc,) = json.loads(out)
    assert [m["sender"] for m in doc["websocket"]][:2] == ["server", "client"]
    assert doc["websocket"][-1]["base64"] == "AP8="


def test_export_import_round_trip_is_byte_identical(ws_cassette: Path, tmp_path: Path) -> None:
    """export, then import, gives back the same cassette file byte for byte."""
    text = tmp_path / "ws.txt"
    assert rp("cassette", "export", ws_cassette.as_posix(), "-o", text.as_posix())[0] == 0
    back = tmp_path / "back.cassette"
    assert rp("cassette", "import", text.as_posix(), "-o", back.as_posix())[0] == 0
    assert back.read_bytes() == ws_cassette.read_bytes()


def test_plot_draws_every_message(ws_cassette: Path, tmp_path: Path) -> None:
    """plot: one mark per WebSocket message, titled with who sent it."""
    svg = tmp_path / "ws.svg"
    assert rp("cassette", "plot", ws_cassette.as_posix(), "-o", svg.as_posix())[0] == 0
    titles = [t.text or "" for t in ET.parse(svg).iter("{http://www.w3.org/2000/svg}title")]
    assert sum("server message" in t for t in titles) == 6
    assert sum("client message" in t for t in titles) == 3


def test_check_reports_a_cut_response(ws_cassette: Path) -> None:
    """check with a close fault: the Realtime response never reaches response.done (exit 1)."""
    code, out, _ = rp("check", ws_cassette.as_posix(), "--fault", "close:events=3,code=1011")
    assert code == 1
    assert "realtime.response-done" in out and "1011" in out
