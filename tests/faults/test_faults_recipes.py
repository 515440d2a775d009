"""The README fault recipes, run as written: user code under test against a replayed stream.

``complete()`` and ``complete_with_retry()`` stand for the code a user tests: they stream a
chat completion with the openai SDK. Each test is one recipe (docs/guides/faults.md "Recipes").
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import httpx
import openai
import pytest
from click.testing import CliRunner

from replayproxy import Cassette, load, save
from replayproxy._cli import cli
from replayproxy._engine.server import ReplayServer
from tests.faults.builders import events_for, interaction
from tests.faults.clients import OPENAI_BODY, text_of


class IncompleteStream(Exception):
    """The stream ended without a finish_reason."""


def complete(client: openai.OpenAI) -> tuple[str, str]:
    """User code: stream a completion; raise if it ends without a finish_reason."""
    parts, finish = [], None
    for chunk in client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}], stream=True
    ):
        for choice in chunk.choices:
            parts.append(choice.delta.content or "")
            finish = choice.finish_reason or finish
    if finish is None:
        raise IncompleteStream("stream ended without finish_reason")
    return "".join(parts), finish


def complete_with_retry(client: openai.OpenAI, attempts: int = 3) -> tuple[str, str]:
    """User code: retry when the connection drops mid-stream, never on a finished answer."""
    for attempt in range(attempts):
        try:
            return complete(client)
        except (httpx.RemoteProtocolError, openai.APIConnectionError):
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


FULL = text_of("openai-chat-text", b"".join(events_for("openai-chat-text", short=True)))


@pytest.fixture
def cassette_path(tmp_path: Path) -> Path:
    """A recorded chat stream (two identical interactions, as if recorded twice)."""
    it = interaction("openai-chat-text", gap_ms=5, ttfb_ms=5, short=True)
    it = replace(it, request=replace(it.request, body=json.dumps(OPENAI_BODY).encode()))
    path = tmp_path / "chat.cassette"
    save(path, Cassette((it, it)))
    return path


def _client(server: ReplayServer, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.url + "/v1", api_key="test", max_retries=0, timeout=timeout
    )


def test_recipe_raises_on_truncated_stream(cassette_path: Path) -> None:
    """truncate:events=5 ends the stream cleanly before finish_reason: the code must raise."""
    with (
        ReplayServer(cassette_path, speed=0, faults=["truncate:events=5"]) as server,
        pytest.raises(IncompleteStream),
    ):
        complete(_client(server))


def test_recipe_retries_on_close(cassette_path: Path) -> None:
    """close on the first answer only (stored with `cassette edit -i 0 --fault`): one retry."""
    result = CliRunner().invoke(
        cli,
        [
            "cassette",
            "edit",
            str(cassette_path),
            "--in-place",
            "-i",
            "0",
            "--fault",
            "close:events=5",
        ],
    )
    assert result.exit_code == 0, result.output
    assert load(cassette_path).interactions[0].faults == ("close:events=5",)
    with ReplayServer(cassette_path, speed=0) as server:
        assert complete_with_retry(_client(server)) == (FULL, "stop")
        assert server.summary().served == 2


def test_recipe_no_retry_on_finish_reason_length(cassette_path: Path) -> None:
    """A recorded finish_reason "length" is an answer, not a failure: exactly one request."""
    cassette = load(cassette_path)
    first = cassette.interactions[0]
    assert first.response is not None
    frames = tuple(
        replace(f, data=f.data.replace(b'"finish_reason":"stop"', b'"finish_reason":"length"'))
        for f in first.response.frames
    )
    edited = replace(first, response=replace(first.response, frames=frames))
    save(cassette_path, Cassette((edited,)))
    with ReplayServer(cassette_path, speed=0) as server:
        assert complete_with_retry(_client(server)) == (FULL, "length")
        assert server.summary().served == 1


def test_recipe_survives_split_utf8(cassette_path: Path) -> None:
    """split:at=utf8 cuts every multi-byte character across reads: the text must not change."""
    with ReplayServer(cassette_path, speed=0, faults=["split:at=utf8"]) as server:
        text, _ = complete(_client(server))
    assert text == FULL and any(ord(c) > 127 for c in text)


def test_recipe_times_out_on_hang(cassette_path: Path) -> None:
    """hang:events=3 stops the stream and keeps the socket open: the read timeout must fire."""
    with (
        ReplayServer(cassette_path, speed=0, faults=["hang:events=3"]) as server,
        pytest.raises((httpx.ReadTimeout, openai.APITimeoutError)),
    ):
        complete(_client(server, timeout=0.5))
