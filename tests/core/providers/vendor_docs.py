"""The vendor table of ``docs/reference/vendors.md``, rendered from the registry (one of
:data:`tests.generated_docs.BLOCKS`: ``python -m tests.generated_docs`` rewrites it, and
``tests/test_generated_docs.py`` fails while the page and :data:`VENDORS` differ)."""

from __future__ import annotations

from replayproxy._core.providers import VENDORS, Marker, VendorDef


def _code(items: list[str]) -> str:
    return ", ".join(f"`{i}`" for i in items)


def _marker(m: Marker) -> str:
    if m.equals is not None:
        test = f" = `{m.equals}`"
    elif m.prefix is not None:
        test = f" starting `{m.prefix}`"
    else:
        test = ", a string," if m.string else ""
    return f"`{m.pointer}`{test} ({m.api.value})"


def _row(v: VendorDef) -> str:
    url = [
        *(f"`{h}`" for h in v.hosts),
        *(f"`{p}…`" for p in v.host_prefixes),
        *([f"`{v.router}` (routes by its first path segment)"] if v.router else []),
        *(f"`/{r}/` at a router" for r in v.routes),
        *(f"port {p}" for p in v.ports),
    ]
    payload = [_marker(m) for m in v.markers] + [f"model `{p}…`" for p in v.models]
    dialects = [f"{name} ({api.value})" for api, name in v.dialects]
    secrets = [*v.secret_headers, *(f"?{q}=" for q in v.secret_query)]
    cells = [
        v.name + (" (echoed)" if v.echoed else ""),
        ", ".join(url),
        ", ".join(payload),
        ", ".join(dialects),
        _code(secrets),
    ]
    return "| " + " | ".join(cells) + " |"


def vendors_table() -> str:
    """One row per vendor, in registry order."""
    head = (
        "| vendor | told from the URL by | told from the payloads by | own dialects | "
        "credentials redacted |\n|---|---|---|---|---|"
    )
    return "\n".join([head, *(_row(v) for v in VENDORS)])
