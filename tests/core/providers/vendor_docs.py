"""The vendor table of ``docs/reference/vendors.md``, written from the registry.

After adding or changing a :class:`~replayproxy._core.providers.VendorDef`, regenerate it with
``python -m tests.core.providers.vendor_docs``; ``test_vendors.py`` fails while the page and
the registry differ.
"""

from __future__ import annotations

from pathlib import Path

from replayproxy._core.providers import VENDORS, Marker, VendorDef

ROOT = Path(__file__).resolve().parents[3]
BEGIN = "<!-- vendors: generated from VENDORS by python -m tests.core.providers.vendor_docs -->"
END = "<!-- end of vendors -->"


def docs_page() -> Path:
    """The page holding the table (wherever the docs keep their reference pages)."""
    (page,) = sorted(ROOT.glob("docs/**/vendors.md"))
    return page


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


def table() -> str:
    """The generated block: markers, header and one row per vendor, in registry order."""
    head = (
        "| vendor | told from the URL by | told from the payloads by | own dialects | "
        "credentials redacted |\n|---|---|---|---|---|"
    )
    return "\n".join([BEGIN, head, *(_row(v) for v in VENDORS), END])


def current() -> str:
    """The block as the page has it now (``""`` if the markers are missing)."""
    text = docs_page().read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        return ""
    return text[text.index(BEGIN) : text.index(END) + len(END)]


def regenerate() -> None:
    """Write the generated block into the page, in place of the old one."""
    page = docs_page()
    text = page.read_text(encoding="utf-8")
    old = current()
    page.write_text(text.replace(old, table()) if old else text + "\n" + table() + "\n")


if __name__ == "__main__":
    regenerate()
