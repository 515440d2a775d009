"""Resumed streams through both proxy modes and the direct server, with real clients.

The recipe of docs/guides/replay.md: ``close:events=5`` cuts the first request; the client
reconnects (``Last-Event-ID`` with httpx, ``responses.retrieve(stream=True, starting_after=N)``
with the openai SDK); the turn text is complete and nothing is duplicated.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path

import httpx
import openai
import pytest

from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette, Interaction, Request
from replayproxy._engine.clock import VirtualClock
from replayproxy._engine.http1_writer import steps
from replayproxy._engine.origin import Origin, Planned
from replayproxy._engine.pacing import execute
from replayproxy._engine.server import ReplayServer
from replayproxy._engine.session import ReplaySession
from replayproxy.testing import MS, interaction
from replayproxy.testing._streams import STREAMS, expected_text
from tests.replay.conftest import ReplayTarget

CHAT = STREAMS["openai-chat-text"]
RESPONSES = Path(__file__).resolve().parents[2] / "cassettes" / "openai-responses.cassette"


def chat_with_ids(n: int = 12, gap_ms: int = 5) -> Interaction:
    """The real OpenAI chat stream's first ``n`` events (and [DONE]), each with ``id: N``."""
    events = [*CHAT.events[: n - 1], CHAT.events[-1]]
    return interaction(
        [b"id: %d\n" % i + e for i, e in enumerate(events)],
        body=b'{"s":1}',
        reason="OK",
        headers=CHAT.headers,
        head_ms=20,
        gap_ms=gap_ms,
        end_after_ms=0,
    )


def chat_text(datas: list[str]) -> str:
    out = []
    for d in datas:
        if d != "[DONE]":
            for c in json.loads(d)["choices"]:
                out.append(c["delta"].get("content") or "")
    return "".join(out)


def read_sse(
    client: httpx.Client, url: str, headers: dict[str, str]
) -> tuple[list[tuple[str | None, str]], Exception | None]:
    """(id, data) of every event received, and the error that cut the stream (if any)."""
    events: list[tuple[str | None, str]] = []
    ev_id: str | None = None
    data: list[str] = []
    try:
        with client.stream("POST", url, content=b'{"s":1}', headers=headers) as r:
            assert r.status_code == 200, r.read()
            for line in r.iter_lines():
                if line.startswith("id: "):
                    ev_id = line[4:]
                elif line.startswith("data: "):
                    data.append(line[6:])
                elif line == "" and data:
                    events.append((ev_id, "\n".join(data)))
                    data = []
    except httpx.HTTPError as e:
        return events, e
    return events, None


def resume_with_last_event_id(url: str, client: httpx.Client) -> None:
    first, error = read_sse(client, url, {})
    assert error is not None, "close:events=5 should have cut the first request"
    assert len(first) == 5
    rest, error = read_sse(client, url, {"Last-Event-ID": first[-1][0] or ""})
    assert error is None
    ids = [i for i, _ in first + rest]
    assert ids == [str(i) for i in range(12)], "an event was lost or served twice"
    assert chat_text([d for _, d in first + rest]) == expected_turn()


def expected_turn() -> str:
    events = [*CHAT.events[:11], CHAT.events[-1]]
    return chat_text([e[len(b"data: ") :].strip().decode() for e in events])


def test_last_event_id_resume_through_the_proxy(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """A stream cut after 5 events and resumed with Last-Event-ID delivers the rest once."""
    session = ReplaySession(Cassette((chat_with_ids(),)), speed=0, faults=["close:events=5"])
    replay_proxy.replayer.use(session)
    url = replay_proxy.base_url + "/v1/chat/completions"
    with httpx.Client(timeout=10) as client:
        resume_with_last_event_id(url, client)
    assert session.summary().unmatched == 0


def test_last_event_id_resume_direct_delivers_the_rest() -> None:
    """Served directly (real sockets), the resumed request gets exactly the events after the
    one its Last-Event-ID names. Their timing is asserted on the virtual clock (below)."""
    it = chat_with_ids(n=8, gap_ms=40)
    with ReplayServer(Cassette((it,)), faults=["close:events=5"]) as server:
        url = server.url + "/v1/chat/completions"
        with httpx.Client(timeout=10) as client:
            first, _ = read_sse(client, url, {})
            headers = {"Last-Event-ID": first[-1][0] or ""}
            with client.stream("POST", url, content=b'{"s":1}', headers=headers) as r:
                rest = b"".join(r.iter_raw())
    assert rest == b"".join(f.data for f in it.frames[5:])


def test_last_event_id_resume_keeps_the_recorded_gaps_on_the_virtual_clock() -> None:
    """The resumed events go out exactly 40 ms apart (their recorded gaps), on the origin's
    schedule executed on the virtual clock; the first request was cut after 5 events."""
    it = chat_with_ids(n=8, gap_ms=40)
    origin = Origin(ReplaySession(Cassette((it,)), faults=["close:events=5"]))
    clock = VirtualClock()

    async def served(headers: tuple[tuple[bytes, bytes], ...]) -> list[tuple[int, bytes]]:
        request = Request("POST", it.request.url, headers=headers, body=b'{"s":1}')
        job = await origin.job(request)
        assert isinstance(job, Planned), job
        writer = clock.writer()
        start = clock.time()
        await execute(
            job.schedule,
            steps(job.schedule, "POST"),
            start,
            asyncio.StreamReader(),
            writer,
            clock,
        )
        return [(at - round(start * 1e9), data) for at, data in writer.writes]

    async def main() -> tuple[list[tuple[int, bytes]], list[tuple[int, bytes]]]:
        first = await served(())
        return first, await served(((b"last-event-id", b"4"),))

    first, resumed = asyncio.run(main())
    assert b"id: 4\n" in first[-1][1] and b"id: 5\n" not in b"".join(d for _, d in first)
    sent = b"".join(d for _, d in resumed)
    assert all(b"id: %d\n" % n not in sent for n in range(5))  # nothing sent twice
    at = [next(t for t, d in resumed if b"id: %d\n" % n in d) for n in (5, 6, 7)]
    assert [b - a for a, b in itertools.pairwise(at)] == [40 * MS, 40 * MS]


def test_resume_with_an_unknown_id_is_an_explained_500() -> None:
    """A Last-Event-ID the recording never sent gets the explained 500, naming the id."""
    with ReplayServer(Cassette((chat_with_ids(),)), speed=0) as server:
        r = httpx.post(
            server.url + "/v1/chat/completions",
            content=b'{"s":1}',
            headers={"Last-Event-ID": "99"},
        )
    assert r.status_code == 500
    assert "Last-Event-ID '99'" in r.text


def responses_text(events: list[object]) -> str:
    return "".join(
        e.delta for e in events if getattr(e, "type", "") == "response.output_text.delta"
    )  # type: ignore[attr-defined]


def test_openai_sdk_resumes_a_responses_stream_with_starting_after(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """openai SDK: a Responses stream cut after 5 events, resumed by retrieve(stream=True,
    starting_after=last sequence number), yields the whole turn text exactly once."""
    session = ReplaySession(RESPONSES, speed=0, faults=["close:events=5"])
    replay_proxy.replayer.use(session)
    if replay_proxy.mode == "forward":
        client = openai.OpenAI(api_key="sk-test", max_retries=0)
    else:
        client = openai.OpenAI(base_url=replay_proxy.base_url + "/v1", api_key="x", max_retries=0)
    (recorded,) = store.load(RESPONSES).interactions
    body = json.loads(recorded.request.body)
    got: list[object] = []
    with pytest.raises((httpx.HTTPError, openai.APIError)):
        for event in client.responses.create(**body):
            got.append(event)
    assert len(got) == 5
    response_id = got[0].response.id  # type: ignore[attr-defined]
    last = got[-1].sequence_number  # type: ignore[attr-defined]
    got.extend(client.responses.retrieve(response_id, stream=True, starting_after=last))
    seqs = [e.sequence_number for e in got]  # type: ignore[attr-defined]
    assert seqs == list(range(len(seqs))), "an event was lost or served twice"
    assert responses_text(got) == expected_text(STREAMS["openai-responses"])
    assert session.summary().unmatched == 0
