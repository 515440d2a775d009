"""One :class:`~.vendor_model.VendorDef` per vendor: the vendor registry's data.

Every reader takes its vendors from :data:`VENDORS`: the checker's dialect names
(:mod:`replayproxy._core.check.dialect`), the default redaction
(:mod:`replayproxy._core.redaction.secrets`) and the vendor table in the docs
(``docs/reference/vendors.md``, checked by ``tests/core/providers/test_vendors.py``). Its order
is the order payload markers are tried: the most specific first. Hosts, routes and ports are
from each vendor's API reference; markers are fields seen in recorded streams (the corpus in
``tests/check/corpus/``).
"""

from __future__ import annotations

from typing import Final

from replayproxy._core.providers.model import Provider
from replayproxy._core.providers.vendor_model import Marker, VendorDef

__all__ = ["VENDORS"]

_CHAT: Final = Provider.OPENAI_CHAT
_RESPONSES: Final = Provider.OPENAI_RESPONSES


def _both(pointer: str, *, equals: str | None = None, string: bool = False) -> tuple[Marker, ...]:
    """A marker at ``pointer`` of a Chat Completions chunk and of a Responses ``response``."""
    return (
        Marker(_CHAT, pointer, equals=equals, string=string),
        Marker(_RESPONSES, "/response" + pointer, equals=equals, string=string),
    )


VENDORS: Final[tuple[VendorDef, ...]] = (
    VendorDef(
        "OpenAI",
        hosts=("api.openai.com",),
        models=("gpt-", "o1", "o3", "o4", "chatgpt-", "codex-", "computer-use"),
        markers=(*_both("/obfuscation"), *_both("/service_tier")),
        dialects=((_CHAT, "OpenAI"), (_RESPONSES, "OpenAI")),
        echoed=True,
    ),
    VendorDef(
        "Azure OpenAI",
        hosts=("openai.azure.com", "cognitiveservices.azure.com", "services.ai.azure.com"),
        markers=(
            Marker(_CHAT, "/prompt_filter_results"),
            Marker(_CHAT, "/choices/0/content_filter_results"),
            Marker(_RESPONSES, "/response/content_filters"),
        ),
        dialects=((_CHAT, "Azure OpenAI"), (_RESPONSES, "Azure OpenAI")),
        # ocp-apim-subscription-key: Azure API Management, often in front of Azure OpenAI
        secret_headers=("api-key", "ocp-apim-subscription-key"),
    ),
    VendorDef("Anthropic", hosts=("api.anthropic.com",), secret_headers=("x-api-key",)),
    VendorDef(
        "Gemini",
        hosts=("generativelanguage.googleapis.com",),
        secret_headers=("x-goog-api-key",),
        secret_query=("key",),
    ),
    VendorDef(
        "Vertex AI",
        hosts=("aiplatform.googleapis.com",),
        markers=(
            Marker(Provider.ANTHROPIC, "/message/id", prefix="msg_vrtx_"),
            Marker(Provider.GEMINI, "/createTime"),
        ),
        dialects=(
            (Provider.ANTHROPIC, "Anthropic on Vertex AI"),
            (Provider.GEMINI, "Vertex AI (Gemini)"),
        ),
    ),
    VendorDef(
        "Bedrock",
        hosts=("amazonaws.com",),
        markers=(Marker(Provider.ANTHROPIC, "/message/id", prefix="msg_bdrk_"),),
        dialects=((Provider.ANTHROPIC, "Anthropic on Bedrock"),),
        secret_headers=("x-amz-security-token",),
    ),
    # Bedrock's OpenAI-compatible endpoint: bedrock-mantle.REGION.api.aws
    VendorDef("Bedrock Mantle", host_prefixes=("bedrock-mantle.",)),
    # the OpenAI-compatible servers with markers of their own, in the order they are tried
    VendorDef(
        "Groq", hosts=("api.groq.com",), routes=("groq",), markers=(Marker(_CHAT, "/x_groq"),)
    ),
    VendorDef(
        "OpenRouter", hosts=("openrouter.ai",), markers=(Marker(_CHAT, "/provider", string=True),)
    ),
    VendorDef(
        "Perplexity",
        hosts=("api.perplexity.ai",),
        models=("sonar",),
        markers=(Marker(_CHAT, "/citations"), Marker(_CHAT, "/search_results")),
    ),
    VendorDef(
        "Ollama",
        hosts=("ollama.com",),
        ports=(11434,),
        markers=(Marker(_CHAT, "/system_fingerprint", equals="fp_ollama"),),
    ),
    VendorDef(
        "Together",
        hosts=("api.together.xyz", "api.together.ai"),
        routes=("together",),
        markers=(Marker(_CHAT, "/choices/0/delta/token_id"), Marker(_CHAT, "/choices/0/seed")),
    ),
    VendorDef("vLLM", ports=(8000,), markers=(Marker(_CHAT, "/choices/0/stop_reason"),)),
    # told by host, route, port or model name only
    VendorDef("DeepSeek", hosts=("api.deepseek.com",), models=("deepseek",)),
    VendorDef(
        "Mistral",
        hosts=("api.mistral.ai",),
        models=("mistral", "magistral", "codestral", "ministral", "pixtral", "devstral"),
    ),
    VendorDef("xAI", hosts=("api.x.ai",), models=("grok",)),
    VendorDef(
        "Fireworks",
        hosts=("api.fireworks.ai",),
        routes=("fireworks-ai",),
        models=("accounts/fireworks",),
    ),
    VendorDef(
        "Moonshot", hosts=("api.moonshot.ai", "api.moonshot.cn"), models=("kimi", "moonshot")
    ),
    VendorDef(
        "Alibaba", hosts=("dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com"), models=("qwen",)
    ),
    VendorDef(
        "Cohere", hosts=("api.cohere.com", "api.cohere.ai"), routes=("cohere",), models=("command",)
    ),
    VendorDef("GitHub Copilot", hosts=("api.githubcopilot.com",)),
    VendorDef("Snowflake", hosts=("snowflakecomputing.com",)),  # ACCOUNT.snowflakecomputing.com
    # serving endpoints: WORKSPACE.cloud.databricks.com
    VendorDef(
        "Databricks", hosts=("cloud.databricks.com", "azuredatabricks.net", "gcp.databricks.com")
    ),
    VendorDef("watsonx", hosts=("ml.cloud.ibm.com",)),  # REGION.ml.cloud.ibm.com/ml/v1/...
    # Workers AI (/client/v4/accounts/ID/ai/v1/...) and AI Gateway
    VendorDef("Cloudflare", hosts=("api.cloudflare.com", "gateway.ai.cloudflare.com")),
    VendorDef("SambaNova", hosts=("api.sambanova.ai",), routes=("sambanova",)),
    VendorDef("Cerebras", hosts=("api.cerebras.ai",), routes=("cerebras",)),
    VendorDef("CentML", hosts=("api.centml.com",)),
    VendorDef("Hyperbolic", hosts=("api.hyperbolic.xyz",), routes=("hyperbolic",)),
    VendorDef(
        "Nebius",
        hosts=("api.studio.nebius.com", "api.studio.nebius.ai", "api.tokenfactory.nebius.com"),
        routes=("nebius",),
    ),
    VendorDef("DeepInfra", hosts=("api.deepinfra.com",)),
    VendorDef("Novita", hosts=("api.novita.ai",), routes=("novita",)),
    VendorDef("NVIDIA", hosts=("integrate.api.nvidia.com",)),
    VendorDef("Baseten", hosts=("inference.baseten.co",)),
    VendorDef("Z.ai", hosts=("api.z.ai",)),
    VendorDef("GitHub Models", hosts=("models.github.ai", "models.inference.ai.azure.com")),
    VendorDef("Vercel AI Gateway", hosts=("ai-gateway.vercel.sh",)),
    VendorDef(
        "Hugging Face",
        hosts=("huggingface.co", "endpoints.huggingface.cloud"),
        router="router.huggingface.co",
        routes=("hf-inference",),
    ),
    VendorDef("Nscale", routes=("nscale",)),
    VendorDef("Featherless", routes=("featherless-ai",)),
    VendorDef("Scaleway", routes=("scaleway",)),
    VendorDef("LM Studio", ports=(1234,)),
)
