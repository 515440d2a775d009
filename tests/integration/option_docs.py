"""The option tables of docs/reference/options.md, rendered from the one option
table: the docs hold them in generated blocks (tests/generated_docs.py rewrites them, and
tests/test_generated_docs.py and tests/integration/test_option_fronts.py check them), so a new
option cannot be left out of them. Run this module to print them."""

from __future__ import annotations

from replayproxy._core.replay.options import RECORD_OPTIONS, Front, Kind, OptionDef, options_for


def _with_metavar(flag: str, opt: OptionDef) -> str:
    text = f"{flag} {opt.metavar}" if opt.metavar and opt.kind is not Kind.FLAG else flag
    return f"`{text}`" + (" (repeatable)" if opt.kind is Kind.LIST else "")


def pytest_rows() -> str:
    """docs/reference/options.md, "Replay options": one row per option the plugin takes."""
    lines = [
        "| marker / config key | command line | ini key | meaning |",
        "|---|---|---|---|",
    ]
    for opt in options_for(Front.PYTEST):
        ini = f"`{opt.ini_name}`" + (" (one per line)" if opt.kind is Kind.LIST else "")
        lines.append(
            f"| `{opt.name}` | {_with_metavar(opt.pytest_flag, opt)} | {ini} | {opt.help} |"
        )
    return "\n".join(lines)


def recording_rows() -> str:
    """docs/reference/options.md, "Record options": the record group in every front end."""
    lines = [
        "| `record` / `replay` flag | mitmproxy option | pytest / `use_cassette()` | meaning |",
        "|---|---|---|---|",
    ]
    for opt in RECORD_OPTIONS:
        lines.append(
            f"| {_with_metavar(opt.cli_flag, opt)} | `{opt.mitm_name}` | `{opt.name}` "
            f"| {opt.help} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(pytest_rows())
    print()
    print(recording_rows())
