"""A request a known client sends on its own reaches a real replay proxy (forward and base-URL
mode) and misses: the explanation the client reads names that client and the setting that
stops the request; an ordinary miss does not."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.replay.conftest import ReplayTarget

CASSETTE = Path(__file__).resolve().parents[2] / "cassettes" / "openai-chat-text.cassette"


def test_litellm_cost_map_and_agents_traces_get_the_client_note(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """GET litellm's cost map and POST openai-agents' trace upload with httpx: each 5xx body
    ends with the note; a plain GET of another path has none."""
    replay_proxy.serve(CASSETTE)
    with httpx.Client(timeout=10) as client:
        r = client.get(
            replay_proxy.base_url + "/BerriAI/litellm/main/model_prices_and_context_window.json"
        )
        assert r.status_code == 500 and r.headers["x-replayproxy-unmatched"] == "1"
        message = r.json()["error"]["message"]
        assert message.splitlines()[-1].startswith("this is a request litellm makes on its own")
        assert "LITELLM_LOCAL_MODEL_COST_MAP=True" in message

        r = client.post(replay_proxy.base_url + "/v1/traces/ingest", json={"data": []})
        assert r.status_code == 500
        message = r.json()["error"]["message"]
        assert "this is a request openai-agents makes on its own" in message
        assert "OPENAI_AGENTS_DISABLE_TRACING=1" in message

        r = client.get(replay_proxy.base_url + "/v1/files")
        assert r.status_code == 500 and "makes on its own" not in r.json()["error"]["message"]
