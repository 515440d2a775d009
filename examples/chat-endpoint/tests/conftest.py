"""Fixtures of the example's tests: the endpoint served by uvicorn on a loopback port, its
upstream being replayproxy in base-URL mode (the marker in each test module names the cassette
and the faults), and its SQLite store."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from chat_endpoint import Settings, create_app
from chat_endpoint.turns import TurnStore
from scenario import API_KEY, MESSAGE


@dataclass
class Endpoint:
    """The running endpoint: its URL and its store."""

    url: str
    store: TurnStore

    def turn(self, turn_id: str) -> dict[str, Any] | None:
        """The stored turn, as ``GET /turns/{id}`` answers."""
        response = httpx.get(f"{self.url}/turns/{turn_id}")
        return response.json() if response.status_code == 200 else None

    def wait_ended(self, turn_id: str, timeout: float = 10.0) -> dict[str, Any]:
        """The stored turn once it is no longer streaming (the turn runs on its own task)."""
        deadline = time.monotonic() + timeout
        while (row := self.store.get(turn_id)) is None or row["status"] == "streaming":
            assert time.monotonic() < deadline, f"turn {turn_id} still streaming: {row}"
            time.sleep(0.02)
        return row

    def chat_body(self, turn_id: str) -> dict[str, str]:
        return {"turn_id": turn_id, "message": MESSAGE}


@pytest.fixture
def replayproxy_config() -> dict[str, Any]:
    """Every test stands in for the OpenAI API (base-URL mode)."""
    return {"upstream": "https://api.openai.com"}


@pytest.fixture
def endpoint(replayproxy: Any, tmp_path: Path) -> Iterator[Endpoint]:
    """The chat endpoint on 127.0.0.1, its provider replayed by replayproxy."""
    settings = Settings(
        base_url=replayproxy.url + "/v1",
        db_path=tmp_path / "turns.sqlite3",
        api_key=API_KEY,
        upstream_timeout=1.0,  # a hung provider is cut after 1 s
        bug=os.environ.get("CHAT_EXAMPLE_BUG") or None,
    )
    app = create_app(settings)
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield Endpoint(f"http://127.0.0.1:{port}", app.state.chat.store)
    server.should_exit = True
    thread.join(10)
