"""The provider registry: every definition complete, detection right on every real stream, and
no module of replayproxy/ with a provider vocabulary of its own."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

import pytest

from replayproxy._core.check import GRAMMARS, PROVIDERS
from replayproxy._core.check.grammars.realtime import RULE_PREFIXES
from replayproxy._core.check.rules import rules_for
from replayproxy._core.matching.equivalence import EQUIVALENCES
from replayproxy._core.providers import (
    DEFINITIONS,
    Framing,
    Keepalive,
    PathRule,
    Provider,
    ProviderDef,
    bedrock_model_vendor,
    definition,
    detect,
)
from tests.core.providers.served import SERVED, ServedStream

PACKAGE = Path(__file__).resolve().parents[3] / "replayproxy"


def problems(d: ProviderDef) -> list[str]:
    """What a definition lacks that the registry's readers need (empty: complete)."""
    out = []
    for name in ("title", "grammar", "dialect"):
        if not getattr(d, name).strip():
            out.append(f"{name} is empty")
    if not d.terminal.summary.strip():
        out.append("terminal.summary is empty")
    if not d.paths and d.provider is not Provider.SSE:  # SSE: the fallback, told by no path
        out.append("no path rule: detection can never answer it")
    if any(rule == PathRule() for rule in d.paths):
        out.append("an empty path rule matches every path")
    streamed = d.framing is not Framing.WEBSOCKET
    if (d.websocket is None) == (not streamed) or (d.websocket and not d.websocket.turn_end):
        out.append("websocket protocol given iff the framing is WebSocket")
    if streamed and d.provider not in GRAMMARS:
        out.append("no checker grammar in core.check.GRAMMARS")
    if not streamed and d.grammar + "." not in RULE_PREFIXES:
        out.append("no WebSocket grammar for its rule prefix")
    if not rules_for(d.grammar + "."):
        out.append(f"no rule id starts with {d.grammar!r}")
    if d.framing is not Framing.SSE and (d.in_band_error or d.keepalive is not Keepalive.NONE):
        out.append("in-band errors and keepalives are SSE events")
    rows = {rule.name for rule in EQUIVALENCES if rule.api is d.provider}
    if set(d.equivalences) != rows:
        out.append(f"equivalences {sorted(d.equivalences)} but the table has {sorted(rows)}")
    if not d.volatile:
        out.append("no volatile fields: events by meaning would keep ids and times")
    out.extend(f"volatile {p!r} is not a JSON pointer" for p in d.volatile if p[:1] != "/")
    return out


@pytest.mark.parametrize("d", DEFINITIONS, ids=lambda d: d.provider.value)
def test_every_definition_is_complete(d: ProviderDef) -> None:
    """Each definition has every field its readers need, consistent with its framing, and a
    grammar and rules in the checker."""
    assert problems(d) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"title": " "}, "title is empty"),
        ({"grammar": ""}, "grammar is empty"),
        ({"dialect": ""}, "dialect is empty"),
        ({"paths": ()}, "no path rule: detection can never answer it"),
        ({"paths": (PathRule(),)}, "an empty path rule matches every path"),
        ({"framing": Framing.WEBSOCKET}, "websocket protocol given iff the framing is WebSocket"),
        ({"provider": Provider.GEMINI_LIVE}, "no checker grammar in core.check.GRAMMARS"),
        ({"grammar": "nothing"}, "no rule id starts with 'nothing'"),
        ({"framing": Framing.EVENTSTREAM}, "in-band errors and keepalives are SSE events"),
        ({"volatile": ()}, "no volatile fields: events by meaning would keep ids and times"),
        ({"volatile": ("id",)}, "volatile 'id' is not a JSON pointer"),
        ({"equivalences": ()},
         "equivalences [] but the table has ['text-block', 'tool-choice-auto']"),
    ],
)  # fmt: skip
def test_an_incomplete_definition_is_caught(change: dict[str, object], problem: str) -> None:
    """Blanking or contradicting a field of a complete definition is reported."""
    broken = replace(definition(Provider.ANTHROPIC), **change)  # type: ignore[arg-type]
    assert problem in problems(broken)


def test_one_definition_per_provider_and_names_are_unique() -> None:
    """Every Provider has exactly one definition; no alias is another's name or alias; the
    checker's choices are the stream APIs, in the registry's order."""
    assert sorted(d.provider for d in DEFINITIONS) == sorted(Provider)
    names = [n for d in DEFINITIONS for n in (d.provider.value, *d.aliases)]
    assert len(names) == len(set(names))
    assert PROVIDERS == (
        "openai-chat", "openai-responses", "anthropic", "gemini", "bedrock-converse",
        "bedrock-invoke", "bedrock-invoke-native", "ollama", "cohere-v2", "sse",
    )  # fmt: skip


@pytest.mark.parametrize("s", SERVED, ids=lambda s: s.name)
def test_detection_on_each_real_stream(s: ServedStream) -> None:
    """The request and content type of each real stream give its provider, and so does the
    request alone (what the faults and error bodies see)."""
    headers = dict(s.headers)
    assert detect(s.url, s.content_type, headers=headers) == s.provider
    assert detect(s.url, headers=headers) == s.provider


@pytest.mark.parametrize(
    ("path", "vendor"),
    [
        ("/model/amazon.nova-lite-v1:0/invoke-with-response-stream", "amazon"),
        ("/model/us.amazon.nova-lite-v1%3A0/invoke", "amazon"),
        ("/model/global.anthropic.claude-sonnet-4-5-v1:0/invoke", "anthropic"),
        ("/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A%3Afoundation-model%2Fmeta.llama3-8b/invoke",
         "meta"),
        ("/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Aapplication-inference-profile%2Fab12/invoke",
         None),
        ("/model/us.nova/invoke", "us"),
        ("/v1/chat/completions", None),
        ("/model", None),
    ],
)  # fmt: skip
def test_bedrock_model_vendor(path: str, vendor: str | None) -> None:
    """The vendor is the model id's first word, after a cross-region geography; ARNs are read
    after their last '/'; an id without a vendor (a profile id) names none."""
    assert bedrock_model_vendor(path) == vendor


@pytest.mark.parametrize(
    ("model", "provider"),
    [
        ("amazon.titan-text-express-v1", Provider.BEDROCK_INVOKE_NATIVE),
        ("eu.meta.llama3-2-1b-instruct-v1:0", Provider.BEDROCK_INVOKE_NATIVE),
        ("anthropic.claude-3-haiku-20240307-v1:0", Provider.BEDROCK_INVOKE),
        ("us.anthropic.claude-3-5-haiku-20241022-v1:0", Provider.BEDROCK_INVOKE),
        ("my-provisioned-model", Provider.BEDROCK_INVOKE),  # cannot be told: as before
    ],
)
def test_invoke_model_is_anthropic_only_for_anthropic_models(model: str, provider: str) -> None:
    """InvokeModelWithResponseStream is checked as Anthropic events only when the model id is
    Anthropic's (or names no vendor); another vendor's model gets the chunk rules alone."""
    url = (
        f"https://bedrock-runtime.us-east-1.amazonaws.com/model/{model}/invoke-with-response-stream"
    )
    assert detect(url, "application/vnd.amazon.eventstream") == provider


# -- no provider vocabulary outside the registry ------------------------------------------------

# "sse" also names a framing (SSE vs NDJSON vs AWS event-stream), which modules may compare.
_NAMES = frozenset(n for d in DEFINITIONS for n in (d.provider.value, *d.aliases)) - {"sse"}
_SPECIFIC = frozenset(n for n in _NAMES if "-" in n)  # names that cannot mean anything else
# The provider simulator plays the providers (its streams are fixtures named after them).
_SKIP = ("_core/providers/", "testing/")
# Known leftovers, each with the line that keeps it (none today).
_ALLOWED: set[tuple[str, str]] = set()


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            out.add(id(node.value))  # attribute docstrings
    return out


def _strings(nodes: list[ast.expr]) -> list[str]:
    return [n.value for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def vocabulary(tree: ast.AST) -> list[str]:
    """Provider names a module spells itself: a specific name anywhere, a comparison with any
    name, a Literal of names, or a collection of two or more."""
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in _SPECIFIC and id(node) not in docs:
            found.append(f"{node.value!r}")
        elif isinstance(node, ast.Compare):
            for name in _strings([node.left, *node.comparators]):
                if name in _NAMES:
                    found.append(f'comparison with "{name}"')
        elif isinstance(node, ast.Subscript) and "Literal" in ast.unparse(node.value):
            inner = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if set(_strings(inner)) & _NAMES:
                found.append(f"Literal of {sorted(set(_strings(inner)) & _NAMES)}")
        elif isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict):
            elts = node.keys if isinstance(node, ast.Dict) else node.elts
            names = [s for s in _strings([e for e in elts if e is not None]) if s in _NAMES]
            if len(names) >= 2:
                found.append(f"collection of {names}")
    return found


def test_no_module_keeps_its_own_provider_vocabulary() -> None:
    """Outside the registry no module of replayproxy/ lists, compares or types provider names
    (except the leftovers named in _ALLOWED, which must still be there)."""
    seen = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(_SKIP):
            continue
        for what in vocabulary(ast.parse(path.read_text(encoding="utf-8"))):
            seen.add((rel, what))
    assert seen == _ALLOWED


@pytest.mark.parametrize(
    "source",
    [
        'Provider = Literal["anthropic", "openai-chat"]',
        'PROVIDERS = ("openai", "anthropic")',
        'if provider == "gemini": pass',
        'GRAMMARS = {"bedrock-invoke": object}',
    ],
)
def test_the_vocabulary_scan_finds_a_planted_list(source: str) -> None:
    """Each way of keeping a vocabulary (Literal, tuple, comparison, dict) is found."""
    assert vocabulary(ast.parse(source))
