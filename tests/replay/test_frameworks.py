"""Frameworks that shape requests differently from the SDK that recorded the cassette:
langchain-openai and litellm, against the shipped cassettes, in both proxy modes.

They are not in the test extra (so CI skips these, with the reason): on Python 3.11 neither
installs beside mitmproxy 11.0.2 (litellm: resolution impossible after ~2.5 min;
langchain-openai: pip still backtracking after 10 min), and on 3.12 they take 3-4 minutes
each to install. Run them with `pip install litellm langchain-openai` on Python 3.12.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.replay.conftest import ReplayTarget

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"
WHY = "not in the test extra: does not install beside mitmproxy 11.0.2 on 3.11, slow on 3.12"

# litellm fetches its model price list from GitHub at import unless told to use its own copy.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.mark.parametrize("equivalence", [True, False])
def test_langchain_openai_without_stream_options_replays_an_sdk_recording(
    replay_proxy: ReplayTarget, client_env: dict[str, str], equivalence: bool
) -> None:
    """langchain-openai with a custom base URL leaves out stream_options; it still matches
    (and does not, with equivalence off)."""
    langchain_openai = pytest.importorskip("langchain_openai", reason=WHY)
    session = replay_proxy.serve(CASSETTES / "openai-chat-text.cassette", equivalence=equivalence)
    llm = langchain_openai.ChatOpenAI(
        model="gpt-4.1-nano",
        base_url=replay_proxy.base_url + "/v1",
        api_key="sk-test",
        max_retries=0,
    )
    if not equivalence:
        with pytest.raises(Exception, match="stream_options"):
            "".join(str(c.content) for c in llm.stream("Invent a new holiday and describe it."))
        return
    text = "".join(str(c.content) for c in llm.stream("Invent a new holiday and describe it."))
    assert "Harmony Day" in text, [m.explain() for m in session.misses]


def test_litellm_anthropic_text_blocks_replay_an_sdk_recording(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """litellm sends Anthropic content as text blocks; the string-content recording matches."""
    litellm = pytest.importorskip("litellm", reason=WHY)
    from litellm.llms.custom_httpx.http_handler import HTTPHandler

    session = replay_proxy.serve(CASSETTES / "anthropic-text.cassette")
    stream = litellm.completion(
        # litellm keeps HTTP clients that read the proxy environment once: give it a new one.
        client=HTTPHandler(),
        model="anthropic/claude-sonnet-4-5-20250929",
        api_base=replay_proxy.base_url,
        api_key="sk-ant-test",
        messages=[{"role": "user", "content": "Hello, how are you?"}],
        max_tokens=1024,
        stream=True,
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert text.startswith("Hello!"), [m.explain() for m in session.misses]


def test_litellm_openai_chat_replays_an_sdk_recording(
    replay_proxy: ReplayTarget, client_env: dict[str, str]
) -> None:
    """litellm's OpenAI request matches the recording made with the openai SDK."""
    litellm = pytest.importorskip("litellm", reason=WHY)
    litellm.in_memory_llm_clients_cache.flush_cache()
    session = replay_proxy.serve(CASSETTES / "openai-chat-text.cassette")
    stream = litellm.completion(
        model="openai/gpt-4.1-nano",
        api_base=replay_proxy.base_url + "/v1",
        api_key="sk-test",
        messages=[{"role": "user", "content": "Invent a new holiday and describe it."}],
        stream=True,
        stream_options={"include_usage": True},
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert "Harmony Day" in text, [m.explain() for m in session.misses]
