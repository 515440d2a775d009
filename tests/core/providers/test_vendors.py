"""The vendor registry: every definition complete, each of its rules telling that vendor and no
other (evidence built from the rule itself), the dialect and the redaction following it, and no
vendor host anywhere else. No test here lists vendors: adding one to VENDORS is checked as it is
(its docs table is a generated block: tests/test_generated_docs.py)."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from replayproxy._core.cassette.model import Request
from replayproxy._core.check import StreamChecker
from replayproxy._core.check.dialect import DialectSniffer
from replayproxy._core.json.pointer import unescape_tokens
from replayproxy._core.providers import (
    DEFINITIONS,
    VENDORS,
    Marker,
    Provider,
    VendorDef,
    definition,
    dialect_name,
    marker_vendor,
    model_vendor,
    vendor_from_url,
)
from replayproxy._core.redaction.secrets import (
    DEFAULT_HEADERS,
    DEFAULT_QUERY_PARAMS,
    REDACTED,
    Redactor,
)
from tests.core.providers.source_scan import docstrings

_ROUTERS = [v.router for v in VENDORS if v.router]
_NAMING_APIS = [d.provider for d in DEFINITIONS if d.model_pointer]


def problems(v: VendorDef) -> list[str]:
    """What a definition lacks or gets wrong (empty: complete)."""
    out = []
    if not v.name.strip():
        out.append("name is empty")
    if not (v.hosts or v.host_prefixes or v.routes or v.ports or v.models or v.markers):
        out.append("no rule: nothing can tell it")
    for text in (*v.hosts, *v.host_prefixes, *v.routes):
        if text != text.lower() or not text.strip() or "/" in text or ":" in text:
            out.append(f"{text!r} is not a lower-case host, prefix or path segment")
    # a model prefix may hold "/" (accounts/fireworks): compared with the lower-cased name
    out.extend(f"model {m!r} is not lower case" for m in v.models if m != m.lower() or not m)
    if v.routes and not _ROUTERS:
        out.append("routes but no vendor is a router")
    if v.models and not _NAMING_APIS:
        out.append("model names but no API says where its model name is")
    for m in v.markers:
        if not m.pointer.startswith("/"):
            out.append(f"marker {m.pointer!r} is not a JSON pointer")
    for api, name in v.dialects:
        if not name.strip() or api not in {d.provider for d in DEFINITIONS}:
            out.append(f"dialect {name!r} of {api!r}")
    for h in (*v.secret_headers, *v.secret_query):
        if h != h.lower() or not h:
            out.append(f"credential {h!r} is not a lower-case name")
    return out


@pytest.mark.parametrize("v", VENDORS, ids=lambda v: v.name)
def test_every_vendor_is_complete(v: VendorDef) -> None:
    """Each definition has a name, at least one rule, well-formed hosts, routes, markers,
    dialects and credential names."""
    assert problems(v) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"name": " "}, "name is empty"),
        ({"hosts": (), "markers": (), "routes": ()}, "no rule: nothing can tell it"),
        ({"hosts": ("https://api.groq.com",)}, "'https://api.groq.com' is not a lower-case host"),
        ({"markers": (Marker(Provider.OPENAI_CHAT, "x_groq"),)},
         "marker 'x_groq' is not a JSON pointer"),
        ({"dialects": ((Provider.OPENAI_CHAT, ""),)}, "dialect '' of"),
        ({"secret_headers": ("X-Key",)}, "credential 'X-Key' is not a lower-case name"),
    ],
)  # fmt: skip
def test_an_incomplete_vendor_is_caught(change: dict[str, object], problem: str) -> None:
    """Blanking or misspelling a field of a complete definition is reported."""
    groq = next(v for v in VENDORS if v.markers and v.hosts and not v.dialects)
    broken = replace(groq, **change)  # type: ignore[arg-type]
    assert any(p.startswith(problem) for p in problems(broken)), problems(broken)


def test_names_and_rules_are_unique() -> None:
    """No two vendors share a name, a host, a host prefix, a route, a port or a model prefix:
    the lookups would otherwise hide one behind the other."""
    for field in ("hosts", "host_prefixes", "routes", "ports", "models"):
        values = [x for v in VENDORS for x in getattr(v, field)]
        assert len(values) == len(set(values)), field
    names = [v.name for v in VENDORS]
    assert len(names) == len(set(names))


# -- evidence built from each rule --------------------------------------------------------------


def url_evidence(v: VendorDef) -> list[str]:
    """URLs each of ``v``'s URL rules names it by."""
    out = []
    for host in v.hosts:
        out += [f"https://{host}/v1/chat/completions", f"https://x.{host}/v1/chat/completions"]
        out.append(f"https://us-central1-{host}/v1/chat/completions")
    out += [f"https://{p}us-east-1.example/v1/chat/completions" for p in v.host_prefixes]
    out += [f"https://{r}/{route}/v1/chat/completions" for r in _ROUTERS for route in v.routes]
    out += [f"http://127.0.0.1:{port}/v1/chat/completions" for port in v.ports]
    return out


def _nest(tokens: tuple[str, ...], value: Any) -> Any:
    if not tokens:
        return value
    inner = _nest(tokens[1:], value)
    return [inner] if tokens[0] == "0" else {tokens[0]: inner}


def marker_payload(m: Marker) -> Any:
    """The smallest payload carrying ``m``."""
    if m.equals is not None:
        value: Any = m.equals
    elif m.prefix is not None:
        value = m.prefix + "01"
    else:
        value = "x" if m.string else {}
    return _nest(unescape_tokens(m.pointer), value)


def model_payload(api: Provider, prefix: str) -> Any:
    return _nest(unescape_tokens(definition(api).model_pointer), prefix + "-1")


_URLS = [(v, url) for v in VENDORS for url in url_evidence(v)]
_MARKERS = [(v, m) for v in VENDORS for m in v.markers]
_MODELS = [(v, api, p) for v in VENDORS for p in v.models for api in _NAMING_APIS]


@pytest.mark.parametrize(("v", "url"), _URLS, ids=[u for _, u in _URLS])
def test_each_url_rule_names_its_vendor(v: VendorDef, url: str) -> None:
    """The host (itself, a subdomain, a region before a dash), host prefix, route at a router
    and local port of each vendor name it and no other, and its dialect follows."""
    assert vendor_from_url(url) is v
    for api in {api for api, _ in v.dialects} | set(_NAMING_APIS):
        assert DialectSniffer(api, url).name == dialect_name(api, v)


@pytest.mark.parametrize("v", [v for v in VENDORS if v.hosts], ids=lambda v: v.name)
def test_a_host_only_ending_in_the_text_names_no_vendor(v: VendorDef) -> None:
    """``evilapi.groq.com`` is not ``api.groq.com``: a host rule matches at a label boundary."""
    for host in v.hosts:
        assert vendor_from_url(f"https://not{host}/v1/chat/completions") is not v


@pytest.mark.parametrize(("v", "m"), _MARKERS, ids=[f"{v.name}:{m.pointer}" for v, m in _MARKERS])
def test_each_marker_names_its_vendor(v: VendorDef, m: Marker) -> None:
    """A payload carrying a vendor's marker is that vendor's (no earlier vendor's marker takes
    it), and without a URL the stream's dialect is named after it."""
    payload = marker_payload(m)
    assert marker_vendor(m.api, payload, echoed=v.echoed) is v
    sniffer = DialectSniffer(m.api)
    sniffer.observe(payload)
    assert sniffer.name == dialect_name(m.api, v)


@pytest.mark.parametrize(
    ("v", "api", "prefix"), _MODELS, ids=[f"{v.name}:{a.value}:{p}" for v, a, p in _MODELS]
)
def test_each_model_prefix_names_its_vendor(v: VendorDef, api: Provider, prefix: str) -> None:
    """A model name starting with a vendor's prefix is that vendor's, on every API that says
    where its model name is; the dialect names it."""
    payload = model_payload(api, prefix)
    assert model_vendor(api, payload, echoed=v.echoed) is v
    sniffer = DialectSniffer(api)
    sniffer.observe(payload)
    assert sniffer.name == dialect_name(api, v)


def test_an_echoed_vendor_yields_to_any_other() -> None:
    """An echoed vendor's marker in the same payload as another vendor's marker or model name
    (OpenAI's service_tier behind Groq) leaves the dialect to the other."""
    for echoed in [v for v in VENDORS if v.echoed]:
        for m in [m for m in echoed.markers if m.api in _NAMING_APIS]:
            for other, om in [(o, om) for o, om in _MARKERS if not o.echoed and om.api is m.api]:
                sniffer = DialectSniffer(m.api)
                sniffer.observe(_merge(marker_payload(m), marker_payload(om)))
                assert sniffer.name == dialect_name(m.api, other)


def _merge(a: Any, b: Any) -> Any:
    if isinstance(a, dict) and isinstance(b, dict):
        return {**a, **{k: _merge(a[k], b[k]) if k in a else b[k] for k in b}}
    if isinstance(a, list) and isinstance(b, list):
        return [_merge(a[0], b[0])]
    return b


def test_a_vendor_named_api_says_the_vendor_in_the_dialect() -> None:
    """An API that names vendors says ``DIALECT (VENDOR)`` for a vendor without a dialect of its
    own for it; another API keeps its dialect whoever serves it."""
    plain = next(v for v in VENDORS if not v.dialects)
    for d in DEFINITIONS:
        expected = f"{d.dialect} ({plain.name})" if d.names_vendors else d.dialect
        assert dialect_name(d.provider, plain) == expected
        assert dialect_name(d.provider, None) == d.dialect


@pytest.mark.parametrize("v", [v for v in VENDORS if v.dialects], ids=lambda v: v.name)
def test_a_vendors_own_dialect_is_named_on_a_real_check(v: VendorDef) -> None:
    """A checked stream sent to a vendor's host is reported in that vendor's own dialect."""
    for api, name in v.dialects:
        if v.hosts:
            checker = StreamChecker(api, url=f"https://{v.hosts[0]}/v1/x")
            checker.close()
            assert checker.dialect == name


# -- readers ------------------------------------------------------------------------------------


def test_every_vendor_credential_is_redacted_by_default() -> None:
    """Each vendor's credential headers and query parameters are in the default redaction, and
    a recorded request carrying them keeps none of their values."""
    headers = [h for v in VENDORS for h in v.secret_headers]
    query = [q for v in VENDORS for q in v.secret_query]
    assert set(headers) <= DEFAULT_HEADERS and set(query) <= DEFAULT_QUERY_PARAMS
    url = "https://h/v1?" + "&".join(f"{q}=sk-secret" for q in query)
    sent = Request("POST", url, headers=tuple((h.encode(), b"sk-secret") for h in headers))
    recorded = Redactor().request(sent)
    assert [value for _, value in recorded.headers] == [REDACTED] * len(headers)
    assert "sk-secret" not in recorded.url


# -- no vendor hosts outside the registry --------------------------------------------------------

_PACKAGE = Path(__file__).resolve().parents[3] / "replayproxy"
_VENDOR_HOSTS = frozenset(h for v in VENDORS for h in v.hosts)
# The provider simulator plays the vendors (its streams are fixtures named after them).
_SKIP = ("_core/providers/", "testing/")
# Known hosts that are no vendor rule, each with why (they must still be there).
_ALLOWED = {
    # where the OpenAI Agents SDK uploads its traces by default: a client's habit, in a note
    ("_core/matching/known_clients.py", "api.openai.com"),
}


def hosts_spelt(tree: ast.AST) -> list[str]:
    """Vendor hosts a module spells itself: a string that is a vendor's host or a URL on one
    (docstrings and prose that mention one are fine)."""
    docs = docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str):
            continue
        if id(node) in docs or " " in node.value:
            continue
        host = node.value.lower()
        if "://" in host:
            host = (urlsplit(host).hostname or "") if "[" not in host else ""
        if host in _VENDOR_HOSTS:
            found.append(host)
    return found


def test_no_module_keeps_vendor_hosts_of_its_own() -> None:
    """Outside the registry (and the simulator) no module of replayproxy/ spells a vendor's
    host: a second host table would drift from VENDORS (except the leftovers in _ALLOWED)."""
    seen = set()
    for path in sorted(_PACKAGE.rglob("*.py")):
        rel = path.relative_to(_PACKAGE).as_posix()
        if not rel.startswith(_SKIP):
            seen |= {(rel, h) for h in hosts_spelt(ast.parse(path.read_text(encoding="utf-8")))}
    assert seen == _ALLOWED


def test_the_host_scan_finds_a_planted_table() -> None:
    """A host table, a URL constant and a comparison with a host are found."""
    planted = 'HOSTS = {"api.groq.com": "Groq"}\nURL = "https://api.x.ai/v1"\nx == "ollama.com"'
    assert sorted(hosts_spelt(ast.parse(planted))) == ["api.groq.com", "api.x.ai", "ollama.com"]
