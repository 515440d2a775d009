"""Which dialect a stream speaks, for the report: the provider's own API, Azure OpenAI, or an
OpenAI-compatible server with its vendor where it can be told.

Told from the request URL's host when there is one, else from the first few payloads: fields
only one vendor sends (``x_groq``, Azure's ``prompt_filter_results``, OpenRouter's
``provider``, Perplexity's ``citations``, vLLM's ``stop_reason`` ...) and, last, the model
name. Every vendor and its evidence is a :class:`~replayproxy._core.providers.VendorDef` of the
registry; this module only feeds it the payloads. A dialect only names the stream; the rules are
the provider API's (a :class:`~replayproxy._core.providers.Provider`). Pure: payloads in, a name
out.
"""

from __future__ import annotations

from typing import Any, Final

from replayproxy._core.providers import (
    Provider,
    VendorDef,
    dialect_name,
    marker_vendor,
    model_vendor,
    vendor_from_url,
)

__all__ = ["DialectSniffer"]

SNIFF_EVENTS: Final = 3  # payloads looked at: every marker shows in the first ones


class DialectSniffer:
    """Names the dialect of one stream of the provider API ``provider``."""

    def __init__(self, provider: Provider | str, url: str | None = None) -> None:
        self.provider = Provider(provider)
        self.vendor: VendorDef | None = vendor_from_url(url)
        self._echoed: VendorDef | None = None  # an echoed vendor's evidence: the fallback
        self._seen = 0

    def _settled(self) -> bool:
        # An echoed vendor's host (api.openai.com is also the URI of cassettes recorded
        # through a base-URL swap) leaves room for a marker only another vendor sends.
        return self.vendor is not None and not self.vendor.echoed

    def observe(self, payload: Any) -> None:
        """Look at one decoded payload (only the first few count)."""
        if self._settled() or self._seen >= SNIFF_EVENTS or not isinstance(payload, dict):
            return
        self._seen += 1
        found = marker_vendor(self.provider, payload)
        if found is None and self.vendor is None:  # the model name: weaker than a host
            found = model_vendor(self.provider, payload)
        if found is not None:
            self.vendor = found
        elif self.vendor is None and self._echoed is None:
            self._echoed = marker_vendor(self.provider, payload, echoed=True) or model_vendor(
                self.provider, payload, echoed=True
            )

    @property
    def name(self) -> str:
        """The dialect, e.g. ``"OpenAI-compatible (DeepSeek)"``, ``"Azure OpenAI"``."""
        return dialect_name(self.provider, self.vendor or self._echoed)
