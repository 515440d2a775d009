"""Record the example's cassettes once, from replayproxy's provider simulator (no API key,
no network): ``python tests/record_cassettes.py`` from examples/chat-endpoint.

``chat-stop.cassette`` is the simulator's real OpenAI Chat stream (302 events, 2 ms apart),
recorded through replayproxy in base-URL mode exactly as the endpoint requests it.
``chat-length.cassette`` is the same recording with the finish chunk's ``"stop"`` edited to
``"length"`` (the provider's answer when ``max_tokens`` runs out).
"""

from __future__ import annotations

import dataclasses

import httpx
from chat_endpoint.upstream import request_body
from scenario import API_KEY, LENGTH, MESSAGE, STOP

from replayproxy import load, save, use_cassette
from replayproxy.testing import Behavior, Simulator


def record() -> None:
    STOP.parent.mkdir(exist_ok=True)
    with (
        Simulator(behavior=Behavior(ttfb_s=0.05, gap_s=0.002)) as sim,
        use_cassette(STOP, record_mode="all", upstream=sim.url) as rp,
    ):
        response = httpx.post(
            rp.url + "/v1/chat/completions",
            json=request_body(MESSAGE),
            headers={"authorization": f"Bearer {API_KEY}"},
            timeout=30,
        )
        assert response.status_code == 200 and b"data: [DONE]" in response.content
    recorded = load(STOP)
    (turn,) = recorded.interactions
    assert turn.response is not None
    frames = tuple(
        dataclasses.replace(
            f, data=f.data.replace(b'"finish_reason":"stop"', b'"finish_reason":"length"')
        )
        for f in turn.response.frames
    )
    assert frames != turn.response.frames, "no finish chunk to edit"
    response_length = dataclasses.replace(turn.response, frames=frames)
    edited = dataclasses.replace(turn, response=response_length)
    save(LENGTH, dataclasses.replace(recorded, interactions=(edited,)))
    print(f"recorded {STOP.name} ({len(frames)} frames) and {LENGTH.name}")


if __name__ == "__main__":
    record()
