"""Every fault against the openai and anthropic SDKs and httpx, through the replay proxy.

Two ways to reach the replay, both a ``replayproxy replay`` subprocess at ``--speed 0``:
``forward`` (clients get ``HTTPS_PROXY`` and ``SSL_CERT_FILE`` from the environment) and
``upstream`` (``--upstream URL``; clients use the proxy URL as their base URL). The faults are
stored in the cassette's interactions (no ``--fault`` flag). Each test asserts the documented
effect (:data:`EXPECTED`, quoted by docs/guides/faults.md) plus the fault's own evidence (a gap, a
split character, a single write...). ``REPLAYPROXY_FAULT_TABLE=path`` writes the observed
table as markdown.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from replayproxy import _store as store
from replayproxy._core.cassette.model import Cassette
from replayproxy._core.faults import plan
from replayproxy.testing._streams import STREAMS
from tests.faults.builders import events_for
from tests.faults.cases import CASES, build_cassette, case_path
from tests.faults.clients import (
    TIMEOUT,
    Outcome,
    run_anthropic,
    run_httpx,
    run_openai,
    sdk_transport,
    text_of,
)
from tests.faults.proxy import replay_process

MODES = ("forward", "upstream")
CLIENTS = ("openai", "anthropic", "httpx-openai", "httpx-anthropic")
STREAM_OF = {
    "openai": "openai-chat-text",
    "httpx-openai": "openai-chat-text",
    "anthropic": "anthropic-text",
    "httpx-anthropic": "anthropic-text",
}
T = sdk_transport()  # the SDKs' transport module: httpx (openai 2 / anthropic 0.x) or httpx2
OK = "ok, full text, terminal seen"
ALTERED = "ok, altered text, terminal seen"
INCOMPLETE = "raises {t}.RemoteProtocolError"

# What each client observes, per case: a phrase for all four clients, or one per client.
# "{t}" is the SDK's transport module; raw httpx clients always raise httpx.* exceptions.
EXPECTED: dict[str, str | dict[str, str]] = {
    "none": OK,
    # The replayer aborts the client with a TCP RST. Over TLS (forward mode) CPython's ssl
    # reports an RST as a ragged EOF, so these clients see an incomplete body there, as they
    # would from a real TLS server; over plain HTTP (upstream mode) see BY_MODE.
    "reset": INCOMPLETE,
    "close": INCOMPLETE,
    "truncate": {
        "openai": OK,  # the SDK never shows [DONE]; finish_reason came before it
        "anthropic": "ok, full text, no terminal",
        "httpx-openai": "ok, full text, no terminal",
        "httpx-anthropic": "ok, full text, no terminal",
    },
    "truncate-mid": "ok, partial text, no terminal",
    "hang": "raises {t}.ReadTimeout",
    "linger": {
        "openai": OK,  # breaks out at [DONE] and closes the response itself
        "anthropic": "raises {t}.ReadTimeout",  # waits for the end of the body after message_stop
        "httpx-openai": "raises {t}.ReadTimeout",
        "httpx-anthropic": "raises {t}.ReadTimeout",
    },
    "stall": OK,
    "stall-timeout": "raises {t}.ReadTimeout",
    "keepalive": OK,
    "ttfb": OK,
    "jitter": OK,
    "throttle": OK,
    "split-utf8": OK,
    "split-midline": OK,
    "split-bytes": OK,
    "coalesce": OK,
    "drop": ALTERED,
    "duplicate": ALTERED,
    "reorder": ALTERED,
    "corrupt": {
        "openai": "raises json.JSONDecodeError",
        "anthropic": "raises json.JSONDecodeError",
        "httpx-openai": ALTERED,
        "httpx-anthropic": ALTERED,
    },
    "error": {
        "openai": "raises openai.APIError",
        "anthropic": "raises anthropic.APIStatusError",  # status 200: not OverloadedError
        "httpx-openai": "ok, partial text, no terminal",
        "httpx-anthropic": "ok, partial text, no terminal",
    },
    "status-429": {
        "openai": "raises openai.RateLimitError",
        "anthropic": "raises anthropic.RateLimitError",
        "httpx-openai": "HTTP 429, no exception",
        "httpx-anthropic": "HTTP 429, no exception",
    },
    "status-5xx": {
        "openai": "raises openai.InternalServerError",
        "anthropic": "raises anthropic.OverloadedError",
        "httpx-openai": "HTTP 503, no exception",
        "httpx-anthropic": "HTTP 529, no exception",
    },
}
RESET = "raises {t}.ReadError"  # [Errno 104] Connection reset by peer
BY_MODE = {("reset", "upstream"): RESET}  # (case, mode) -> phrase, where modes differ
# openai 3.x (on httpx2) wraps transport errors raised while iterating a stream in its own
# classes; openai 2.x and both anthropic generations let the transport's exception through.
OPENAI_3 = {
    INCOMPLETE: "raises openai.APIConnectionError",
    RESET: "raises openai.APIConnectionError",
    "raises {t}.ReadTimeout": "raises openai.APITimeoutError",
}
OBSERVED: dict[tuple[str, str, str], Outcome] = {}


def expected(case: str, client: str, mode: str) -> str:
    phrase = BY_MODE.get((case, mode), EXPECTED[case])
    text = phrase if isinstance(phrase, str) else phrase[client]
    if client == "openai" and T == "httpx2":
        text = OPENAI_3.get(text, text)
    return text.format(t=T if client in ("openai", "anthropic") else "httpx")


@pytest.fixture(scope="module")
def cassette() -> Cassette:
    return build_cassette()


@pytest.fixture(scope="module")
def cassette_path(cassette: Cassette, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("faults") / "faults.cassette"
    store.save(path, cassette)
    return path


@pytest.fixture(scope="module", params=MODES)
def endpoint(
    request: pytest.FixtureRequest, cassette_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str, str | None]]:
    """(mode, proxy URL, CA path): one long-lived replay proxy per mode, for every case."""
    args = ["--speed", "0", "--allow-repeats"]
    if request.param == "upstream":
        args += ["--upstream", "https://api.openai.com"]
    with replay_process(cassette_path, args, tmp_path_factory.mktemp("confdir")) as proc:
        yield request.param, proc.url, proc.ca_cert


@pytest.fixture(scope="module", autouse=True)
def _write_table() -> Iterator[None]:
    yield
    target = os.environ.get("REPLAYPROXY_FAULT_TABLE")
    if target and OBSERVED:
        lines = ["| case | faults | mode | client | observed | detail |", "|---" * 6 + "|"]
        for (case, client, mode), out in sorted(OBSERVED.items()):
            detail = out.message.replace("|", "/")[:80]
            faults = "; ".join(CASES[case])
            lines.append(f"| {case} | `{faults}` | {mode} | {client} | {out.effect} | {detail} |")
        Path(target).write_text("\n".join(lines) + "\n")


def configure(
    endpoint: tuple[str, str, str | None], monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """Set the environment as users do (forward: proxy + CA vars); return the base URLs."""
    mode, url, ca = endpoint
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    if mode == "forward":
        assert ca is not None
        monkeypatch.setenv("HTTPS_PROXY", url)
        monkeypatch.setenv("SSL_CERT_FILE", ca)
        monkeypatch.setenv("NO_PROXY", "")
        return {"openai": "https://api.openai.com", "anthropic": "https://api.anthropic.com"}
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    return {"openai": url, "anthropic": url}


def run_client(bases: dict[str, str], case: str, client: str) -> Outcome:
    """Run ``client`` against ``case`` (its path prefix) and return what it observed."""
    prefix = case_path(case)
    if client == "openai":
        return run_openai(bases["openai"] + prefix + "/v1")
    if client == "anthropic":
        return run_anthropic(bases["anthropic"] + prefix)
    if client == "httpx-openai":
        return run_httpx(bases["openai"] + prefix + "/v1/chat/completions", "openai-chat-text")
    return run_httpx(bases["anthropic"] + prefix + "/v1/messages", "anthropic-text")


def planned_text(cassette: Cassette, case: str, stream: str) -> str:
    """The text a client should assemble from the faulted body (computed by plan())."""
    for i, it in enumerate(cassette.interactions):
        path = it.request.path
        if path.startswith(case_path(case) + "/") and STREAMS[stream].path in path:
            return text_of(stream, plan(it, i, speed=0).body)
    raise LookupError(case)


def check_evidence(case: str, client: str, out: Outcome) -> None:
    """The fault's own, client-visible evidence beyond the outcome phrase."""
    raw = client.startswith("httpx")
    body = b"".join(out.chunks)
    if case == "stall":
        assert 0.25 <= out.total_s < 5
        if raw:
            # The bytes after event 3 arrive >= 0.3 s after the request (a lower bound: a busy
            # machine can only delay reads, so no upper bound on the earlier ones).
            cut = len(b"".join(events_for(STREAM_OF[client], short=True)[:3]))
            pos, after = 0, None
            for chunk, at in zip(out.chunks, out.chunk_times, strict=True):
                pos += len(chunk)
                if pos > cut:
                    after = at
                    break
            assert after is not None and after >= 0.25
    elif case == "ttfb":
        assert out.head_s is not None and 0.25 <= out.head_s < 5
    elif case == "keepalive":
        assert out.total_s >= 1.8  # stalled 2 s with a 1 s read timeout, and survived
        if raw:
            assert b": keepalive" in body or b"event: ping" in body
    elif case in ("hang", "stall-timeout", "linger") and out.error:
        assert TIMEOUT * 0.8 <= out.total_s < 5
    elif case == "throttle":
        size = len(b"".join(events_for(STREAM_OF[client], short=True)))
        bps = 20000 if "openai" in client else 6000
        assert out.total_s >= 0.7 * size / bps
    elif case == "split-utf8" and client == "httpx-openai":
        torn = 0
        for chunk in out.chunks:
            try:
                chunk.decode("utf-8")
            except UnicodeDecodeError:
                torn += 1
        assert torn >= 2  # a read ends inside a character, the next starts inside it
    elif case == "split-midline" and raw:
        assert sum(not c.endswith(b"\n") for c in out.chunks) >= 3  # reads ending mid-line
    elif case == "split-bytes" and raw:
        assert len(out.chunks) > len(events_for(STREAM_OF[client], short=True))
    elif case == "coalesce" and raw:
        assert len(out.chunks) <= 3  # instead of one read per event (12 / 15)
    elif case.startswith("status") and raw:
        assert body.startswith(b"{") and b"error" in body


def check_outcome(cassette: Cassette, case: str, client: str, out: Outcome, mode: str) -> None:
    """The documented effect (EXPECTED), the text the faulted body carries, the evidence."""
    assert out.effect == expected(case, client, mode), out.message
    stream = STREAM_OF[client]
    if not out.error and out.status in (None, 200):
        assert out.text == planned_text(cassette, case, stream)
    elif out.text:
        full = text_of(stream, b"".join(events_for(stream, short=True)))
        assert full.startswith(out.text) or case == "error"
    check_evidence(case, client, out)


@pytest.mark.parametrize("case", list(CASES))
def test_fault_effect_on_clients(
    endpoint: tuple[str, str, str | None],
    cassette: Cassette,
    case: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each client (openai, anthropic, httpx x2) observes the stored fault's documented effect."""
    bases = configure(endpoint, monkeypatch)
    with ThreadPoolExecutor(len(CLIENTS)) as pool:
        runs = pool.map(lambda c: run_client(bases, case, c), CLIENTS)
        outcomes = dict(zip(CLIENTS, runs, strict=True))
    failures = []
    for client, out in outcomes.items():
        OBSERVED[(case, client, endpoint[0])] = out
        try:
            check_outcome(cassette, case, client, out, endpoint[0])
        except AssertionError as e:
            failures.append(f"{client}: {out.effect!r} ({out.message[:80]}): {e}")
    assert not failures, "\n".join(failures)
