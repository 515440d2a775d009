"""Which vendor serves a stream, from the request URL or from its first payloads, and the
dialect that names it: the one place replayproxy tells a vendor (pure).

Rules come from :data:`~.vendors.VENDORS` only; :class:`~replayproxy._core.check.dialect.
DialectSniffer` feeds these lookups a stream's payloads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import urlsplit

from replayproxy._core.json.pointer import unescape_tokens
from replayproxy._core.providers.detection import definition
from replayproxy._core.providers.model import Provider
from replayproxy._core.providers.vendor_model import Marker, VendorDef
from replayproxy._core.providers.vendors import VENDORS

__all__ = [
    "dialect_name",
    "marker_vendor",
    "model_vendor",
    "value_at",
    "vendor_from_url",
]

_ROUTERS: Final = {v.router: v for v in VENDORS if v.router}
_ROUTES: Final = {route: v for v in VENDORS for route in v.routes}
_PORTS: Final = {port: v for v in VENDORS for port in v.ports}
# longest first: the most specific rule wins whatever the registry's order
_HOSTS: Final = sorted(((host, v) for v in VENDORS for host in v.hosts), key=lambda hv: -len(hv[0]))
_MODELS: Final = sorted(
    ((model, v) for v in VENDORS for model in v.models), key=lambda mv: -len(mv[0])
)
_MISSING: Final = object()


def vendor_from_url(url: str | None) -> VendorDef | None:
    """The vendor a request URL's host (or, failing that, its port) names, or ``None``."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:  # a malformed URL names no vendor
        return None
    for v in VENDORS:
        if host.startswith(v.host_prefixes):
            return v
    if host in _ROUTERS:
        routed = _ROUTES.get(parts.path.strip("/").split("/", 1)[0])
        if routed is not None:
            return routed
    for suffix, v in _HOSTS:
        # "-" too: Vertex hosts are REGION-aiplatform.googleapis.com
        if host == suffix or host.endswith(("." + suffix, "-" + suffix)):
            return v
    return _PORTS.get(port) if port is not None else None


def value_at(doc: Any, pointer: str) -> Any:
    """The value at the JSON pointer in ``doc`` (array indexes too), or a sentinel that is
    no JSON value when there is none."""
    for token in unescape_tokens(pointer) if pointer else ():
        if isinstance(doc, Mapping) and token in doc:
            doc = doc[token]
        elif isinstance(doc, list) and token.isdigit() and int(token) < len(doc):
            doc = doc[int(token)]
        else:
            return _MISSING
    return doc


def _carries(payload: Any, marker: Marker) -> bool:
    value = value_at(payload, marker.pointer)
    if value is _MISSING:
        return False
    if marker.string or marker.prefix is not None:
        if not isinstance(value, str):
            return False
        return marker.prefix is None or value.startswith(marker.prefix)
    return marker.equals is None or value == marker.equals


def marker_vendor(api: Provider, payload: Any, *, echoed: bool = False) -> VendorDef | None:
    """The first vendor (registry order) whose marker for ``api`` ``payload`` carries; only
    :attr:`~.vendor_model.VendorDef.echoed` vendors when ``echoed``, else only the others."""
    for v in VENDORS:
        if v.echoed == echoed and any(m.api is api and _carries(payload, m) for m in v.markers):
            return v
    return None


def model_vendor(api: Provider, payload: Any, *, echoed: bool = False) -> VendorDef | None:
    """The vendor whose model-name prefix the model of ``payload`` (at the API's
    :attr:`~.model.ProviderDef.model_pointer`) starts with; echoed vendors as in
    :func:`marker_vendor`."""
    pointer = definition(api).model_pointer
    model = value_at(payload, pointer) if pointer else None
    if not isinstance(model, str):
        return None
    name = model.lower()
    return next((v for p, v in _MODELS if v.echoed == echoed and name.startswith(p)), None)


def dialect_name(api: Provider, vendor: VendorDef | None) -> str:
    """The dialect a report names for a stream of ``api`` served by ``vendor``: the vendor's
    own name for the API, else the API's dialect, with the vendor in parentheses where the API
    :attr:`~.model.ProviderDef.names_vendors`."""
    d = definition(api)
    if vendor is None:
        return d.dialect
    own = vendor.dialect_for(api)
    if own is not None:
        return own
    return f"{d.dialect} ({vendor.name})" if d.names_vendors else d.dialect
