"""Generate docs/reference/api.md, the public Python API, from the code itself.

The public line is what users import: ``replayproxy``, ``replayproxy.testing`` (with
``replayproxy.testing.strategies``), ``replayproxy.checking`` and the pytest plugin's fixtures and
marker. Every other module is private. This page lists each public name with its signature and
docstring, so the reference cannot drift from the code: ``tests/test_public_line.py`` fails when
the page differs from what this script writes.

    python scripts/api_reference.py          # rewrite the page
    python scripts/api_reference.py --check  # exit 1 if the page is out of date
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import re
import sys
from enum import Enum
from pathlib import Path
from typing import Any

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "api.md"

# The public modules, in the order the page shows them, with what each is for.
MODULES = {
    "replayproxy": "cassettes, replay servers and `use_cassette()`, errors.",
    "replayproxy.testing": "what tests build and read: builders, the provider simulator, the "
    "stream capture of your own endpoint.",
    "replayproxy.testing.strategies": "hypothesis strategies (needs `hypothesis`).",
    "replayproxy.checking": "the stream checker's Python API.",
}
PLUGIN = "replayproxy.pytest_plugin.plugin"
FIXTURES = ("replayproxy", "replayproxy_config", "replayproxy_cassette_dir", "stream_snapshot")

# Objects replayproxy makes and hands to the user: their constructors are not part of the API.
MADE_FOR_YOU = {
    "CassetteUse",
    "SeenRequest",
    "StreamCapture",
    "CapturedEvent",
    "CapturedFrame",
    "Served",
    "SimRequest",
    "InteractionReport",
    "StreamReport",
}

_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
_ROLE = re.compile(r":(?:class|func|meth|attr|data|mod|exc):`~?(?:[\w.]*\.)?([\w]+)`")


def _doc(obj: Any) -> str:
    """The docstring with Sphinx roles and ``literals`` as Markdown code."""
    doc = (inspect.getdoc(obj) or "").strip()
    doc = _ROLE.sub(r"`\1`", doc)
    return doc.replace("``", "`")


def _signature(obj: Any) -> str:
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return ""
    return _ADDRESS.sub("", text)


def _members(cls: type) -> list[tuple[str, Any]]:
    """The public methods and properties a class defines itself (not inherited, not fields)."""
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    out = []
    for name, value in vars(cls).items():
        if name.startswith("_") and name not in ("__enter__", "__aenter__"):
            continue
        if name in fields:
            continue
        if isinstance(value, property | staticmethod | classmethod) or inspect.isfunction(value):
            out.append((name, value))
    return out


def _entry(module: str, name: str, obj: Any) -> list[str]:
    """A class (constructor, first sentence, methods and properties), a function, or a value;
    exceptions go to :func:`_errors`."""
    lines = [f"### `{module}.{name}`", ""]
    if inspect.isclass(obj):
        bases = ", ".join(b.__name__ for b in obj.__bases__ if b is not object)
        shows_init = name not in MADE_FOR_YOU and not issubclass(obj, Enum)
        head = f"class {name}{_signature(obj) if shows_init else ''}"
        lines += ["```python", head + (f"  # ({bases})" if bases else ""), "```", ""]
        if _doc(obj):
            lines += [_first(_doc(obj)), ""]
        if issubclass(obj, Enum):
            lines += ["Members: " + ", ".join(f"`{m.name}`" for m in obj), ""]
        members = _members(obj)
        for member, value in members:
            if isinstance(value, property):
                lines += [f"- `.{member}` (property): {_first(_doc(value))}"]
            else:
                func = value.__func__ if isinstance(value, staticmethod | classmethod) else value
                signature = re.sub(r"^\((?:self|cls)(?:, )?", "(", _signature(func))
                lines += [f"- `.{member}{signature}`: {_first(_doc(func))}"]
        if members:
            lines.append("")
    elif callable(obj):
        prefix = "async def" if inspect.iscoroutinefunction(obj) else "def"
        lines += ["```python", f"{prefix} {name}{_signature(obj)}", "```", ""]
        if _doc(obj):
            lines += [_first(_doc(obj)), ""]
    else:
        value = repr(obj)
        shown = value if len(value) <= 80 else f"{type(obj).__name__} ({len(value)} characters)"
        lines += [f"`{name} = {shown}`", ""]
    return lines


def _first(doc: str) -> str:
    """The first sentence of a docstring, on one line."""
    paragraph = " ".join(doc.split("\n\n", 1)[0].split())
    end = re.search(r"[.:;](\s|$)", paragraph)
    return paragraph if end is None else paragraph[: end.start() + 1]


def _errors(module: str, errors: list[tuple[str, type]]) -> list[str]:
    """Exceptions in one table: name, what it derives from, when it is raised."""
    lines = [
        f"### Errors of `{module}`",
        "",
        "| error | derives from | raised when |",
        "|---|---|---|",
    ]
    for name, cls in errors:
        bases = ", ".join(f"`{b.__name__}`" for b in cls.__bases__)
        lines.append(f"| `{name}` | {bases} | {_first(_doc(cls))} |")
    return [*lines, ""]


def public_modules() -> dict[str, Any]:
    return {name: importlib.import_module(name) for name in MODULES}


def render() -> str:
    lines = [
        "# Public Python API",
        "",
        "<!-- Generated by `python scripts/api_reference.py` from the code: do not edit by hand."
        " tests/test_public_line.py fails when this page is out of date. -->",
        "",
        "Everything importable from these modules is public and kept stable; every other module"
        " of the package is private (its name or a folder above it starts with `_`) and may"
        " change in any release. The command line is documented in [cli.md](cli.md), the"
        " options every front end takes in [options.md](options.md).",
        "",
    ]
    for module_name, mod in public_modules().items():
        lines += [
            f"## `{module_name}`",
            "",
            MODULES[module_name][0].upper() + MODULES[module_name][1:],
            "",
        ]
        names = sorted(mod.__all__)
        errors = [
            n
            for n in names
            if inspect.isclass(getattr(mod, n)) and issubclass(getattr(mod, n), BaseException)
        ]
        for name in names:
            if name not in errors:
                lines += _entry(module_name, name, getattr(mod, name))
        if errors:
            lines += _errors(module_name, [(n, getattr(mod, n)) for n in errors])
    plugin = importlib.import_module(PLUGIN)
    lines += [
        "## The pytest plugin",
        "",
        "Registered through the `pytest11` entry point: installing replayproxy is enough"
        " (`-p no:replayproxy` turns it off).",
        "",
        "### Marker",
        "",
        "```python",
        "@pytest." + plugin.marker_signature().replace("replayproxy(", "mark.replayproxy(", 1),
        "```",
        "",
        "### Fixtures",
        "",
    ]
    snapshot = importlib.import_module("replayproxy.pytest_plugin._snapshot")
    for name in FIXTURES:
        fixture = getattr(plugin, name, None) or getattr(snapshot, name)
        lines += [f"- `{name}`: {_first(_doc(fixture))}"]
    lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is out of date")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not PAGE.exists() or PAGE.read_text() != text:
            print(f"{PAGE} is out of date: run python scripts/api_reference.py", file=sys.stderr)
            return 1
        return 0
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
