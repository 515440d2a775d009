"""The provider registry: one :class:`Provider` and one :class:`ProviderDef` per provider API,
and :func:`detect`, the one place a request is told to be one.

Everything provider-specific reads it: the stream checker (grammar, framing, dialect), the
faults (in-band error event, keepalive, terminal event, error body), the error bodies
replayproxy answers with, and the request equivalences. Adding a provider is one definition in
:mod:`.definitions`, its grammar, its tests and its docs (docs/explanations/architecture.md,
"Where to add things").

Beside the APIs, the vendors who serve them: one :class:`VendorDef` per vendor in
:data:`VENDORS` (:mod:`.vendors`: OpenAI, Azure OpenAI, Vertex AI, the OpenAI-compatible
servers), read by the dialect a report names and by the default redaction; adding one is a
definition and its row in the docs (docs/explanations/architecture.md, "Where to add things").
"""

from __future__ import annotations

from replayproxy._core.providers.bedrock_models import (
    ANTHROPIC_MODELS,
    BEDROCK_FAMILIES,
    ModelFamily,
    bedrock_model_family,
)
from replayproxy._core.providers.definitions import DEFINITIONS
from replayproxy._core.providers.detection import (
    STREAM_PROVIDERS,
    bedrock_model_vendor,
    definition,
    detect,
    parse,
)
from replayproxy._core.providers.model import (
    ErrorShape,
    Framing,
    InBandError,
    Keepalive,
    PathRule,
    Provider,
    ProviderDef,
    Terminal,
    WebSocketProtocol,
)
from replayproxy._core.providers.vendor_detection import (
    dialect_name,
    marker_vendor,
    model_vendor,
    vendor_from_url,
)
from replayproxy._core.providers.vendor_model import Marker, VendorDef
from replayproxy._core.providers.vendors import VENDORS

__all__ = [
    "ANTHROPIC_MODELS",
    "BEDROCK_FAMILIES",
    "DEFINITIONS",
    "STREAM_PROVIDERS",
    "VENDORS",
    "ErrorShape",
    "Framing",
    "InBandError",
    "Keepalive",
    "Marker",
    "ModelFamily",
    "PathRule",
    "Provider",
    "ProviderDef",
    "Terminal",
    "VendorDef",
    "WebSocketProtocol",
    "bedrock_model_family",
    "bedrock_model_vendor",
    "definition",
    "detect",
    "dialect_name",
    "marker_vendor",
    "model_vendor",
    "parse",
    "vendor_from_url",
]
