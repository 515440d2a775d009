"""The provider registry: one :class:`Provider` and one :class:`ProviderDef` per provider API,
and :func:`detect`, the one place a request is told to be one.

Everything provider-specific reads it: the stream checker (grammar, framing, dialect), the
faults (in-band error event, keepalive, terminal event, error body), the error bodies
replayproxy answers with, and the request equivalences. Adding a provider is one definition in
:mod:`.definitions`, its grammar, its tests and its docs (docs/contributing/extending.md).
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

__all__ = [
    "ANTHROPIC_MODELS",
    "BEDROCK_FAMILIES",
    "DEFINITIONS",
    "STREAM_PROVIDERS",
    "ErrorShape",
    "Framing",
    "InBandError",
    "Keepalive",
    "ModelFamily",
    "PathRule",
    "Provider",
    "ProviderDef",
    "Terminal",
    "WebSocketProtocol",
    "bedrock_model_family",
    "bedrock_model_vendor",
    "definition",
    "detect",
    "parse",
]
