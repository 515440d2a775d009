"""Real provider streams as they are served: each corpus stream, shipped payload file and
example cassette with the request URL, headers and response Content-Type it comes with, and the
provider and dialect the registry must answer for it.

The corpus files carry payloads only (no URL), so each is served at the real endpoint of the
vendor its manifest names. The last streams are the cases where the per-module detectors that
the registry replaced disagreed: the same real payloads served by Claude on Vertex AI, Bedrock's
InvokeModel (for an Anthropic and for an Amazon model: Nova's InvokeModel chunks carry the
ConverseStream members), Bedrock Mantle, Snowflake Cortex and Bedrock's OpenAI-compatible
endpoint.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from replayproxy import _store as store
from replayproxy._core import faults
from replayproxy._core.cassette.model import Ending, EndKind, Frame, Interaction, Request, Response
from replayproxy._core.providers import parse
from replayproxy._core.wire import eventstream
from tests.check.corpus_streams import frame, load_corpus

__all__ = ["SERVED", "ServedStream", "interaction"]

SSE = "text/event-stream"
EVENTSTREAM = "application/vnd.amazon.eventstream"
NDJSON = "application/x-ndjson"
ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class ServedStream:
    """One real stream and the request it answers; ``provider``/``dialect``: the right answer."""

    name: str
    url: str
    content_type: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    provider: str
    dialect: str


_ANTHROPIC_HEADERS = (("anthropic-version", "2023-06-01"),)
# dialect of a corpus stream -> (its vendor's endpoint, by API)
_ENDPOINTS: dict[tuple[str, str], str] = {
    ("anthropic", "Anthropic"): "https://api.anthropic.com/v1/messages",
    ("bedrock-converse", "Bedrock (ConverseStream)"): (
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-lite-v1:0/converse-stream"
    ),
    ("gemini", "Gemini"): (
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash"
        ":streamGenerateContent?alt=sse"
    ),
    ("gemini", "Vertex AI (Gemini)"): (
        "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1"
        "/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    ),
    ("openai-chat", "Azure OpenAI"): (
        "https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"
    ),
    ("openai-chat", "OpenAI"): "https://api.openai.com/v1/chat/completions",
    ("openai-chat", "OpenAI-compatible (Alibaba)"): (
        "https://dashscope-intl.aliyuncs.com/compatible-mode/v1/chat/completions"
    ),
    ("openai-chat", "OpenAI-compatible (DeepSeek)"): "https://api.deepseek.com/chat/completions",
    ("openai-chat", "OpenAI-compatible (Groq)"): "https://api.groq.com/openai/v1/chat/completions",
    ("openai-chat", "OpenAI-compatible (Mistral)"): "https://api.mistral.ai/v1/chat/completions",
    ("openai-chat", "OpenAI-compatible (xAI)"): "https://api.x.ai/v1/chat/completions",
    ("openai-responses", "Azure OpenAI"): "https://r.openai.azure.com/openai/v1/responses",
    ("openai-responses", "OpenAI"): "https://api.openai.com/v1/responses",
}


def _payloads(name: str) -> list[bytes]:
    files = resources.files("replayproxy.testing").joinpath("payloads")
    raw = files.joinpath(name).read_bytes()
    return [line for line in raw.splitlines() if line.strip()]


def _invoke(payloads: list[bytes]) -> bytes:
    """InvokeModelWithResponseStream: each payload base64 in a ``chunk`` event."""
    return b"".join(
        eventstream.encode_event(
            "chunk", json.dumps({"bytes": base64.b64encode(p).decode()}).encode()
        )
        for p in payloads
    )


def _corpus() -> list[ServedStream]:
    """Every corpus stream served as an event stream, at the URL its manifest records (the
    vendor's endpoint for older entries without one), under the provider's registry name."""
    out = []
    for s in load_corpus():
        provider = parse(s.provider).value  # the manifest may use an alias ("ollama-native")
        media = getattr(s, "content_type", "") or (
            EVENTSTREAM if provider.startswith("bedrock") else SSE
        )
        if media.split(";")[0].strip() not in (SSE, EVENTSTREAM, NDJSON):
            continue  # a JSON body (Gemini's array form): no event stream to detect
        url = getattr(s, "url", "") or _ENDPOINTS[(provider, s.dialect)]
        headers = _ANTHROPIC_HEADERS if provider == "anthropic" else ()
        out.append(ServedStream(s.name, url, media, headers, s.body, provider, s.dialect))
    return out


def _payload_files() -> list[ServedStream]:
    # replayproxy/testing/payloads holds the shared provider streams, byte for byte
    names = {
        "anthropic-messages-text.jsonl": ("anthropic", "Anthropic"),
        "anthropic-messages-tool-use.jsonl": ("anthropic", "Anthropic"),
        "bedrock-converse-text.jsonl": ("bedrock-converse", "Bedrock (ConverseStream)"),
        "gemini-text.jsonl": ("gemini", "Gemini"),
        "openai-chat-text.jsonl": ("openai-chat", "OpenAI"),
        "openai-compatible-chat-tool-call.jsonl": ("openai-chat", "OpenAI-compatible (xAI)"),
        "openai-responses-web-search.jsonl": ("openai-responses", "OpenAI"),
    }
    out = []
    for name, (provider, dialect) in names.items():
        media = EVENTSTREAM if provider.startswith("bedrock") else SSE
        headers = _ANTHROPIC_HEADERS if provider == "anthropic" else ()
        body = frame(provider, _payloads(name))
        url = _ENDPOINTS[(provider, dialect)]
        out.append(ServedStream(f"payloads/{name}", url, media, headers, body, provider, dialect))
    return out


def _cassettes() -> list[ServedStream]:
    out = []
    expected = {
        "anthropic-text": ("anthropic", "Anthropic"),
        "anthropic-tool-use": ("anthropic", "Anthropic"),
        "gemini-text": ("gemini", "Gemini"),
        "openai-chat-text": ("openai-chat", "OpenAI"),
        "openai-chat-tool-call": ("openai-chat", "OpenAI-compatible (xAI)"),
        "openai-responses": ("openai-responses", "OpenAI"),
    }
    for path in sorted((ROOT / "cassettes").glob("*.cassette")):
        (inter,) = store.load(path).interactions
        assert inter.response is not None
        body = b"".join(w.data for w in faults.plan(inter, 0, speed=1.0).writes)
        headers = tuple((k.decode(), v.decode()) for k, v in inter.request.headers)
        provider, dialect = expected[path.stem]
        media = inter.response.header("content-type") or ""
        name = f"cassettes/{path.name}"
        out.append(ServedStream(name, inter.request.url, media, headers, body, provider, dialect))
    return out


def _disputed() -> list[ServedStream]:
    anthropic = _payloads("anthropic-messages-text.jsonl")
    converse = _payloads("bedrock-converse-text.jsonl")
    chat = frame("openai-chat", _payloads("openai-chat-text.jsonl"))
    responses = frame("openai-responses", _payloads("openai-responses-web-search.jsonl"))
    runtime = "https://bedrock-runtime.us-east-1.amazonaws.com"
    mantle = "https://bedrock-mantle.us-east-1.api.aws"
    return [
        ServedStream(
            "vertex-claude",
            "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5"
            "/publishers/anthropic/models/claude-sonnet-4:streamRawPredict",
            SSE, (), frame("anthropic", anthropic), "anthropic", "Anthropic on Vertex AI",
        ),
        ServedStream(
            "bedrock-invoke-claude",
            f"{runtime}/model/anthropic.claude-3-5-sonnet-20241022-v2:0/invoke-with-response-stream",
            EVENTSTREAM, (), _invoke(anthropic), "bedrock-invoke",
            "Anthropic on Bedrock (InvokeModelWithResponseStream)",
        ),
        ServedStream(
            "bedrock-invoke-nova",
            f"{runtime}/model/us.amazon.nova-lite-v1%3A0/invoke-with-response-stream",
            EVENTSTREAM, (), _invoke(converse), "bedrock-invoke-native",
            "Bedrock (Amazon Nova)",
        ),
        ServedStream(
            "bedrock-openai-chat", f"{runtime}/openai/v1/chat/completions", SSE, (), chat,
            "openai-chat", "OpenAI-compatible (Bedrock)",
        ),
        ServedStream(
            "mantle-chat", f"{mantle}/v1/chat/completions", SSE, (), chat, "openai-chat",
            "OpenAI-compatible (Bedrock Mantle)",
        ),
        ServedStream(
            "mantle-responses", f"{mantle}/openai/v1/responses", SSE, (), responses,
            "openai-responses", "OpenAI-compatible (Bedrock Mantle)",
        ),
        ServedStream(
            "snowflake-chat",
            "https://myorg-acct.snowflakecomputing.com/api/v2/cortex/v1/chat/completions",
            SSE, (), chat, "openai-chat", "OpenAI-compatible (Snowflake)",
        ),
    ]  # fmt: skip


SERVED: tuple[ServedStream, ...] = (*_corpus(), *_payload_files(), *_cassettes(), *_disputed())


def interaction(s: ServedStream) -> Interaction:
    """The stream as a recorded interaction (the body in one frame, at time 0)."""
    headers = tuple((k.encode(), v.encode()) for k, v in s.headers)
    request = Request("POST", s.url, headers=headers, body=b"{}")
    content_type = ((b"content-type", s.content_type.encode()),)
    response = Response(200, "OK", headers=content_type, frames=(Frame(0, s.body),))
    return Interaction(request, response, Ending(EndKind.COMPLETE, 0))
