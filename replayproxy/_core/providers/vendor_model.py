"""The vendor registry's types: :class:`VendorDef`, who serves a provider API (OpenAI, Azure
OpenAI, Vertex AI, and the OpenAI-compatible servers: DeepSeek, Groq, Ollama, vLLM ...), and
:class:`Marker`, a field of a stream's events that only one vendor sends.

A provider (:class:`~.model.Provider`) says which rules a stream is checked by; a vendor says
who is speaking: the dialect a report names, the credentials recording redacts. Data only; the
values live in :mod:`.vendors`, the lookups in :mod:`.vendor_detection`.
"""

from __future__ import annotations

from dataclasses import dataclass

from replayproxy._core.providers.model import Provider

__all__ = ["Marker", "VendorDef"]


@dataclass(frozen=True, slots=True)
class Marker:
    """A field only one vendor sends in the events of ``api``: present at ``pointer`` (RFC 6901,
    ``/choices/0/delta/token_id``), and when given equal to ``equals``, starting with
    ``prefix``, or (``string``) a JSON string."""

    api: Provider
    pointer: str
    equals: str | None = None
    prefix: str | None = None
    string: bool = False


@dataclass(frozen=True, slots=True)
class VendorDef:
    """Everything replayproxy knows about one vendor, in one place.

    Detection reads the rules in this order: ``host_prefixes``, a ``router``'s ``routes``,
    ``hosts``, then ``ports``; without a URL, the ``markers`` in the first payloads, then the
    model name (``models``).
    """

    name: str
    """The name reports print (``"DeepSeek"``); unique."""
    hosts: tuple[str, ...] = ()
    """API hosts (lower case), matched as the host itself, a subdomain (``RES.openai.azure.com``)
    or a region before a dash (``us-central1-aiplatform.googleapis.com``); the longest wins."""
    host_prefixes: tuple[str, ...] = ()
    """Host beginnings that name it before any ``hosts`` rule (``bedrock-mantle.``: a host of
    ``api.aws``, which names other AWS services too)."""
    router: str = ""
    """A host that routes to other vendors by its first path segment (Hugging Face's router)."""
    routes: tuple[str, ...] = ()
    """That first path segment at a router (``router.huggingface.co/groq/v1/...``)."""
    ports: tuple[int, ...] = ()
    """Well-known local ports (``11434``: Ollama), when no host names a vendor."""
    models: tuple[str, ...] = ()
    """Model-name prefixes (lower case) at the API's
    :attr:`~.model.ProviderDef.model_pointer`; the longest wins."""
    markers: tuple[Marker, ...] = ()
    """Fields only it sends; the first vendor in :data:`~.vendors.VENDORS` whose marker a
    payload carries wins."""
    dialects: tuple[tuple[Provider, str], ...] = ()
    """Its own dialect name for an API (``(Provider.GEMINI, "Vertex AI (Gemini)")``); other APIs
    it serves get the API's dialect, naming the vendor where the API
    :attr:`~.model.ProviderDef.names_vendors`."""
    echoed: bool = False
    """Other servers pass its markers and model names through (OpenAI's ``gpt-`` names and
    ``service_tier`` behind Bedrock Mantle or Snowflake, and recordings made through a base-URL
    swap keep ``api.openai.com``): its evidence counts only when no other vendor's does."""
    secret_headers: tuple[str, ...] = ()
    """Request headers (lower case) holding its credentials: redacted by default."""
    secret_query: tuple[str, ...] = ()
    """Query parameters holding its credentials (``key``: Gemini): redacted by default."""

    def dialect_for(self, api: Provider) -> str | None:
        """Its own dialect name for ``api``, or ``None``."""
        return next((name for p, name in self.dialects if p is api), None)
