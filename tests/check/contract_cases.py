"""Rule cases for application stream contracts: the example contract and recorded stream in
docs/examples (SSE and NDJSON) as clean bases, and one minimal mutation per ``contract.*`` and
``ndjson.*`` rule. :mod:`tests.check.cases` merges them into ``BASES`` / ``CASES``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replayproxy._core.check import Contract, parse_contract

__all__ = ["APP_BASES", "EXAMPLES", "app_cases", "contract", "ndjson_events", "sse_events"]

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def contract(name: str = "chat-turn.contract.toml") -> Contract:
    """A contract from docs/examples."""
    return parse_contract((EXAMPLES / name).read_text(), fmt="toml")


def sse_events() -> list[bytes]:
    """The example SSE stream, one bytes object per event."""
    body = (EXAMPLES / "chat-turn.sse").read_bytes()
    return [e + b"\n\n" for e in body.split(b"\n\n") if e]


def ndjson_events() -> list[bytes]:
    """The example NDJSON stream, one line (with its newline) per event."""
    return [line + b"\n" for line in (EXAMPLES / "chat-turn.ndjson").read_bytes().splitlines()]


def _sse_event(name: str, obj: dict[str, Any]) -> bytes:
    data = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return f"event: {name}\ndata: {data}\n\n".encode()


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def _ndjson_objs() -> list[dict[str, Any]]:
    return [json.loads(line) for line in ndjson_events()]


APP_BASES: dict[str, tuple[Contract, Callable[[], bytes]]] = {
    "app-sse": (contract(), lambda: b"".join(sse_events())),
    "app-ndjson": (contract("chat-turn-ndjson.contract.toml"), lambda: b"".join(ndjson_events())),
}


def app_cases() -> dict[str, tuple[str, Contract, bytes]]:
    """rule -> (base name, contract, body breaking exactly that rule)."""
    sse, nd = contract(), contract("chat-turn-ndjson.contract.toml")
    ev = sse_events()
    c: dict[str, tuple[str, Contract, bytes]] = {}

    objs = _ndjson_objs()
    del objs[1]["type"]
    c["contract.type"] = ("app-ndjson", nd, b"".join(map(_line, objs)))
    # Without an order grammar, a stream that starts with a delta breaks only the start rule.
    c["contract.start"] = ("app-sse", dataclasses.replace(sse, order=None), b"".join(ev[1:]))
    c["contract.terminal"] = ("app-sse", sse, b"".join(ev[:-1]))
    c["contract.order"] = ("app-sse", sse, b"".join([*ev[:4], ev[5], ev[4], ev[6]]))
    moved = ev[3].replace(b'"turn_id":"t_8f2c41"', b'"turn_id":"t_0000aa"')
    c["contract.same"] = ("app-sse", sse, b"".join([*ev[:3], moved, *ev[4:]]))
    bare = _sse_event("delta", {"turn_id": "t_8f2c41"})
    c["contract.required"] = ("app-sse", sse, b"".join([*ev[:4], bare, *ev[5:]]))

    lines = ndjson_events()
    c["ndjson.json"] = ("app-ndjson", nd, b"".join([*lines[:3], b'{"type":"delta",\n', *lines[3:]]))
    c["ndjson.utf8"] = (
        "app-ndjson",
        nd,
        b"".join([*lines[:4], lines[4].replace(b"22 ", b"22\xff "), *lines[5:]]),
    )
    c["ndjson.unterminated"] = ("app-ndjson", nd, b"".join(lines)[:-1])
    return c
