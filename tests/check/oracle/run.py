"""Every reader over every oracle stream: one server, one client per SDK, one Node process
for the whole batch (:func:`client_outcomes`, the slow part, run once per test session), and
each stream's checker verdict beside them (:func:`results`, what the agreement test and the
report read)."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from dataclasses import dataclass

from replayproxy._core.check import Violation
from replayproxy._errors import UsageError
from replayproxy.checking import check_stream
from tests.check.oracle import node_runner, py_anthropic, py_bedrock, py_google, py_openai
from tests.check.oracle.outcome import ClientOutcome, Delivered, judge, raised
from tests.check.oracle.readers import Readers
from tests.check.oracle.server import Body, StreamServer
from tests.check.oracle.streams import OracleStream, corpus_streams, key_of
from tests.check.oracle.truth import Reading, read
from tests.check.oracle.variants import variants

__all__ = ["Result", "all_streams", "checker", "client_outcomes", "results"]


@dataclass(frozen=True, slots=True)
class Result:
    stream: OracleStream
    errors: tuple[Violation, ...]
    warnings: tuple[Violation, ...]
    checker_note: str  # why the checker could not check it ("" when it did)
    outcomes: tuple[ClientOutcome, ...]


@functools.cache
def all_streams() -> tuple[OracleStream, ...]:
    corpus = corpus_streams()
    return (*corpus, *variants(corpus))


def checker(stream: OracleStream) -> tuple[tuple[Violation, ...], tuple[Violation, ...], str]:
    """The checker's errors and warnings on ``stream`` (with its provider and URL), or why it
    cannot check it (one line)."""
    try:
        report = check_stream(stream.body, provider=stream.provider, url=stream.url)
    except UsageError as e:
        return (), (), str(e)
    return tuple(report.errors), tuple(report.warnings), ""


def outcome(
    client: str, way: str, truth: Reading, read_it: Callable[[], Delivered]
) -> ClientOutcome:
    try:
        with warnings.catch_warnings():
            # pydantic warns when a field holds what the API never documents (a list for a
            # str): that is what the oracle feeds the SDKs on purpose.
            warnings.simplefilter("ignore", UserWarning)
            got = read_it()
    except Exception as e:  # what the client raised is the measurement
        if truth.error is not None:
            # raising on a stream that carries a provider error (a rate limit,
            # response.failed) tells the application the request failed: the client's job
            name = getattr(e, "type_name", type(e).__name__)
            return ClientOutcome(client, way, "fine", f"raised {name} on the stream's error")
        return raised(client, way, e)
    return judge(client, way, truth, got)


def _python_readers(base_url: str) -> Readers:
    merged: Readers = {}
    for module in (py_openai, py_anthropic, py_google, py_bedrock):
        for provider, ways in module.readers(base_url).items():
            merged.setdefault(provider, []).extend(ways)
    return merged


def client_outcomes() -> dict[str, tuple[ClientOutcome, ...]]:
    """Every client way's outcome on every oracle stream, by stream name (the slow part:
    serve, read with every SDK; a stream no client reads has none)."""
    streams = all_streams()
    bodies = {key_of(i): Body(s.content_type, s.body) for i, s in enumerate(streams)}
    truths = [read(s.provider, s.body) for s in streams]
    found: dict[str, list[ClientOutcome]] = {s.name: [] for s in streams}
    with StreamServer(bodies) as server:
        readers = _python_readers(server.url)
        for i, (stream, truth) in enumerate(zip(streams, truths, strict=True)):
            if truth is None:
                continue
            family = "bedrock-invoke" if stream.provider.startswith("bedrock-invoke") else ""
            ways = readers.get(stream.provider) or readers.get(family, [])
            for client, way, read_it in ways:
                found[stream.name].append(
                    outcome(client, way, truth, functools.partial(read_it, key_of(i)))
                )
        for i, client, way, got in node_runner.read_all(server.url, streams, truths):
            truth = truths[i]
            assert truth is not None
            found[streams[i].name].append(outcome(client, way, truth, got.value))
    return {name: tuple(outcomes) for name, outcomes in found.items()}


def results(outcomes: dict[str, tuple[ClientOutcome, ...]]) -> dict[str, Result]:
    """Each stream's checker verdict beside its client outcomes."""
    out = {}
    for stream in all_streams():
        errors, warned, note = checker(stream)
        out[stream.name] = Result(stream, errors, warned, note, outcomes.get(stream.name, ()))
    return out
