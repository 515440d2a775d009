"""VCR.py / pytest-recording cassettes (YAML or JSON, format version 1) as a Cassette (pure).

VCR.py writes ``{"interactions": [{"request": {"body", "headers", "method", "uri"},
"response": {"body": {"string": ...}, "headers", "status": {"code", "message"}}}],
"version": 1}``; headers map a name to a list of values; a body that is not UTF-8 (gzip kept
compressed, binary event-stream) is YAML ``!!binary`` (base64), loaded back as the same bytes.
YAML is read with ruamel.yaml's safe loader only: the YAML core schema plus the three benign
Python string/tuple tags of old VCR.py files; anything else (``!!python/object...``) is refused.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from replayproxy._core.cassette.model import Cassette, Header, Request
from replayproxy._core.importers.build import Built, Exchange, ImportFailed, build
from replayproxy._core.importers.losses import assemble
from replayproxy._core.importers.timing import TimingModel

__all__ = ["import_vcr", "load_document"]


def _loader() -> YAML:
    """ruamel.yaml's safe loader, plus the benign Python tags old VCR.py files carry
    (``!!python/unicode``, ``!!python/str``, ``!!python/tuple``: scalars and lists only)."""
    yaml = YAML(typ="safe", pure=True)
    for tag in ("python/unicode", "python/str"):
        yaml.constructor.add_constructor(
            f"tag:yaml.org,2002:{tag}", lambda c, node: c.construct_scalar(node)
        )
    yaml.constructor.add_constructor(
        "tag:yaml.org,2002:python/tuple", lambda c, node: c.construct_sequence(node)
    )
    return yaml


class NotACassette(ImportFailed):
    """The file is no VCR.py cassette at all (another JSON or YAML document, or neither): a
    directory walk skips it; a file named on the command line fails."""


def load_document(data: bytes, name: str) -> Any:
    """The JSON or YAML document in ``data`` (JSON when it starts with ``{``)."""
    text = data.lstrip()
    try:
        if text.startswith(b"{"):
            return json.loads(data)
        return _loader().load(io.BytesIO(data))
    except (ValueError, YAMLError, RecursionError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise NotACassette(f"{name}: not a VCR.py cassette (unparseable: {first})") from None


def _bytes(value: object, what: str) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    raise ImportFailed(f"{what} is a {type(value).__name__}, expected a string or !!binary")


def _headers(value: object, what: str) -> tuple[Header, ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise ImportFailed(f"{what} is not a map of names to values")
    out: list[Header] = []
    for name, values in value.items():
        for v in values if isinstance(values, list) else [values]:
            out.append((str(name).encode("latin-1", "replace"), str(v).encode("utf-8")))
    return tuple(out)


def _map(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ImportFailed(f"{what} is missing or not a map")
    return value


def _exchange(name: str, index: int, item: object) -> Exchange:
    item = _map(item, f"{name}: interaction {index}")
    req = _map(item.get("request"), f"{name}: interaction {index} request")
    method, uri = str(req.get("method", "")), str(req.get("uri", ""))
    where = f"{name}: interaction {index} ({method} {uri})"
    request = Request(
        method,
        uri,
        headers=_headers(req.get("headers"), f"{where}: request headers"),
        body=_bytes(req.get("body"), f"{where}: request body"),
    )
    resp = _map(item.get("response"), f"{where}: response")
    status = _map(resp.get("status"), f"{where}: response status")
    code = status.get("code")
    if isinstance(code, bool) or not isinstance(code, int):
        raise ImportFailed(f"{where}: response status code {code!r} is not a number")
    body = resp.get("body")
    raw = body.get("string") if isinstance(body, Mapping) else body
    if body is None and "content" in resp:  # old VCR.py httpx cassettes: {"content": ...}
        raw = resp["content"]
    return Exchange(
        where,
        request,
        status=code,
        reason=str(status.get("message") or ""),
        headers=_headers(resp.get("headers"), f"{where}: response headers"),
        body=_bytes(raw, f"{where}: response body"),
    )


def import_vcr(data: bytes, name: str, model: TimingModel | None = None) -> Cassette:
    """The cassette of a VCR.py file's bytes; ``name`` (the file) is used in every message."""
    model = model or TimingModel()
    doc = load_document(data, name)
    if not isinstance(doc, Mapping) or not isinstance(doc.get("interactions"), list):
        raise NotACassette(f"{name}: not a VCR.py cassette (no interactions list)")
    if doc.get("version", 1) != 1:
        raise ImportFailed(f"{name}: VCR.py cassette version {doc.get('version')!r} (expected 1)")
    built: list[Built] = [
        build(_exchange(name, i, item), model) for i, item in enumerate(doc["interactions"])
    ]
    return assemble(built, f"vcr {name}", model)
