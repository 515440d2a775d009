"""Which dialect a stream speaks, for the report: the provider's own API, Azure OpenAI, or an
OpenAI-compatible server with its vendor where it can be told.

Told from the request URL's host when there is one, else from the first few payloads: fields
only one vendor sends (``x_groq``, Azure's ``prompt_filter_results``, OpenRouter's
``provider``, Perplexity's ``citations``, vLLM's ``stop_reason`` ...) and, last, the model
name. A dialect only names the stream; the rules are the provider API's (a
:class:`~replayproxy._core.providers.Provider`), whose definition gives the dialect named when
nothing more is told. Pure: payloads in, a name out.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import urlsplit

from replayproxy._core.providers import Provider, definition

__all__ = ["DialectSniffer", "vendor_from_url"]

SNIFF_EVENTS: Final = 3  # payloads looked at: every marker below shows in the first ones

# host prefix -> vendor, before the suffixes: Bedrock Mantle, the OpenAI-compatible endpoint of
# Bedrock, is bedrock-mantle.REGION.api.aws (and api.aws names other AWS services too)
_HOST_PREFIXES: Final = (("bedrock-mantle.", "Bedrock Mantle"),)
# host suffix -> vendor; the first match wins (most specific first)
_HOSTS: Final = (
    ("api.openai.com", "OpenAI"),
    ("openai.azure.com", "Azure OpenAI"),
    ("cognitiveservices.azure.com", "Azure OpenAI"),
    ("services.ai.azure.com", "Azure OpenAI"),
    ("api.anthropic.com", "Anthropic"),
    ("generativelanguage.googleapis.com", "Gemini"),
    ("aiplatform.googleapis.com", "Vertex AI"),
    ("amazonaws.com", "Bedrock"),
    ("api.deepseek.com", "DeepSeek"),
    ("api.groq.com", "Groq"),
    ("api.mistral.ai", "Mistral"),
    ("openrouter.ai", "OpenRouter"),
    ("api.together.xyz", "Together"),
    ("api.together.ai", "Together"),
    ("api.x.ai", "xAI"),
    ("api.perplexity.ai", "Perplexity"),
    ("api.fireworks.ai", "Fireworks"),
    ("api.moonshot.ai", "Moonshot"),
    ("api.moonshot.cn", "Moonshot"),
    ("dashscope.aliyuncs.com", "Alibaba"),
    ("dashscope-intl.aliyuncs.com", "Alibaba"),
    ("api.githubcopilot.com", "GitHub Copilot"),
    ("snowflakecomputing.com", "Snowflake"),  # Cortex: ACCOUNT.snowflakecomputing.com
    ("cloud.databricks.com", "Databricks"),  # serving endpoints: WORKSPACE.cloud.databricks.com
    ("azuredatabricks.net", "Databricks"),
    ("gcp.databricks.com", "Databricks"),
    ("ml.cloud.ibm.com", "watsonx"),  # REGION.ml.cloud.ibm.com/ml/v1/text/chat_stream
    ("api.cloudflare.com", "Cloudflare"),  # Workers AI: /client/v4/accounts/ID/ai/v1/...
    ("gateway.ai.cloudflare.com", "Cloudflare"),
    ("api.cohere.com", "Cohere"),
    ("api.cohere.ai", "Cohere"),
    ("api.sambanova.ai", "SambaNova"),
    ("api.cerebras.ai", "Cerebras"),
    ("api.centml.com", "CentML"),
    ("api.hyperbolic.xyz", "Hyperbolic"),
    ("api.studio.nebius.com", "Nebius"),
    ("api.studio.nebius.ai", "Nebius"),
    ("api.tokenfactory.nebius.com", "Nebius"),
    ("api.deepinfra.com", "DeepInfra"),
    ("api.novita.ai", "Novita"),
    ("integrate.api.nvidia.com", "NVIDIA"),
    ("inference.baseten.co", "Baseten"),
    ("api.z.ai", "Z.ai"),
    ("models.github.ai", "GitHub Models"),
    ("models.inference.ai.azure.com", "GitHub Models"),
    ("ollama.com", "Ollama"),
    ("ai-gateway.vercel.sh", "Vercel AI Gateway"),
    ("huggingface.co", "Hugging Face"),  # router.huggingface.co: the provider is in the path
    ("endpoints.huggingface.cloud", "Hugging Face"),
)
# Hugging Face's router: router.huggingface.co/PROVIDER/v1/... serves that provider's API
_ROUTED: Final = {
    "cerebras": "Cerebras",
    "cohere": "Cohere",
    "fireworks-ai": "Fireworks",
    "groq": "Groq",
    "hyperbolic": "Hyperbolic",
    "nebius": "Nebius",
    "novita": "Novita",
    "nscale": "Nscale",
    "sambanova": "SambaNova",
    "together": "Together",
    "featherless-ai": "Featherless",
    "scaleway": "Scaleway",
    "hf-inference": "Hugging Face",
}
_PORTS: Final = {11434: "Ollama", 1234: "LM Studio", 8000: "vLLM"}
# model name prefix -> vendor (only when no structural marker told it)
_MODELS: Final = (
    ("deepseek", "DeepSeek"),
    ("grok", "xAI"),
    ("mistral", "Mistral"),
    ("magistral", "Mistral"),
    ("codestral", "Mistral"),
    ("ministral", "Mistral"),
    ("pixtral", "Mistral"),
    ("devstral", "Mistral"),
    ("kimi", "Moonshot"),
    ("moonshot", "Moonshot"),
    ("qwen", "Alibaba"),
    ("sonar", "Perplexity"),
    ("accounts/fireworks", "Fireworks"),
    ("command", "Cohere"),
)
_OPENAI_MODELS: Final = ("gpt-", "o1", "o3", "o4", "chatgpt-", "codex-", "computer-use")
_OPENAI_FAMILY: Final = frozenset({Provider.OPENAI_CHAT, Provider.OPENAI_RESPONSES})
# the Anthropic events a Claude message id tells the host of
_ANTHROPIC_EVENTS: Final = frozenset({Provider.ANTHROPIC, Provider.BEDROCK_INVOKE})


def vendor_from_url(url: str | None) -> str | None:
    """The vendor a request URL's host names, or ``None``."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:  # a malformed URL names no vendor
        return None
    for prefix, vendor in _HOST_PREFIXES:
        if host.startswith(prefix):
            return vendor
    if host == "router.huggingface.co":
        routed = parts.path.strip("/").split("/", 1)[0]
        if routed in _ROUTED:
            return _ROUTED[routed]
    for suffix, vendor in _HOSTS:
        # "-" too: Vertex hosts are REGION-aiplatform.googleapis.com
        if host == suffix or host.endswith(("." + suffix, "-" + suffix)):
            return vendor
    return _PORTS.get(port) if port is not None else None


def _chat_vendor(p: dict[str, Any], *, structural_only: bool = False) -> str | None:
    choices = p.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else {}
    first = first if isinstance(first, dict) else {}
    delta = first.get("delta")
    delta = delta if isinstance(delta, dict) else {}
    if "prompt_filter_results" in p or "content_filter_results" in first:
        return "Azure OpenAI"
    if "x_groq" in p:
        return "Groq"
    if isinstance(p.get("provider"), str):
        return "OpenRouter"
    if "citations" in p or "search_results" in p:
        return "Perplexity"
    if p.get("system_fingerprint") == "fp_ollama":
        return "Ollama"
    if "token_id" in delta or "seed" in first:
        return "Together"
    if "stop_reason" in first:
        return "vLLM"
    return None if structural_only else _model_vendor(p.get("model"))


def _model_vendor(model: Any) -> str | None:
    if not isinstance(model, str):
        return None
    name = model.lower()
    for prefix, vendor in _MODELS:
        if name.startswith(prefix):
            return vendor
    return None


def _is_openai(p: dict[str, Any], model: Any) -> bool:
    if "obfuscation" in p or "service_tier" in p:
        return True
    return isinstance(model, str) and model.lower().startswith(_OPENAI_MODELS)


class DialectSniffer:
    """Names the dialect of one stream of the provider API ``provider``."""

    def __init__(self, provider: Provider | str, url: str | None = None) -> None:
        self.provider = Provider(provider)
        self.vendor = vendor_from_url(url)
        # api.openai.com is also the URI of cassettes recorded through a base-URL swap: there
        # a marker only another vendor sends (OpenRouter's provider, x_groq ...) still tells it
        self._from_url = self.vendor is not None and self.vendor != "OpenAI"
        self._openai = False
        self._seen = 0
        self._anthropic_host: str | None = None

    def observe(self, payload: Any) -> None:
        """Look at one decoded payload (only the first few count)."""
        if self._from_url or self._seen >= SNIFF_EVENTS or not isinstance(payload, dict):
            return
        self._seen += 1
        if self.provider is Provider.OPENAI_CHAT and self.vendor == "OpenAI":
            marker = _chat_vendor(payload, structural_only=True)
            self.vendor = marker or self.vendor
        elif self.provider is Provider.OPENAI_CHAT and self.vendor is None:
            self.vendor = _chat_vendor(payload)
            self._openai = self._openai or _is_openai(payload, payload.get("model"))
        elif self.provider is Provider.OPENAI_RESPONSES and self.vendor is None:
            response = payload.get("response")
            if isinstance(response, dict):
                if "content_filters" in response:
                    self.vendor = "Azure OpenAI"
                else:
                    model = response.get("model")
                    self.vendor = _model_vendor(model)
                    self._openai = self._openai or _is_openai(response, model)
        elif self.provider in _ANTHROPIC_EVENTS:
            message = payload.get("message")
            mid = message.get("id") if isinstance(message, dict) else None
            if isinstance(mid, str) and mid.startswith("msg_vrtx_"):
                self._anthropic_host = "Vertex AI"
            elif isinstance(mid, str) and mid.startswith("msg_bdrk_"):
                self._anthropic_host = "Bedrock"
        elif self.provider is Provider.GEMINI and "createTime" in payload:
            self.vendor = "Vertex AI"

    @property
    def name(self) -> str:
        """The dialect, e.g. ``"OpenAI-compatible (DeepSeek)"``, ``"Azure OpenAI"``."""
        provider, vendor = self.provider, self.vendor
        if provider in _OPENAI_FAMILY:
            if vendor in ("OpenAI", "Azure OpenAI"):
                return vendor
            if vendor is None:
                return "OpenAI" if self._openai else definition(provider).dialect
            return f"OpenAI-compatible ({vendor})"
        if provider is Provider.ANTHROPIC:
            host = self._anthropic_host or (vendor if vendor in ("Vertex AI", "Bedrock") else None)
            return f"Anthropic on {host}" if host else definition(provider).dialect
        if provider is Provider.GEMINI and vendor == "Vertex AI":
            return "Vertex AI (Gemini)"
        return definition(provider).dialect
