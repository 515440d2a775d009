"""Requests a known client sends on its own, and the setting that stops them (pure data).

Some SDKs and frameworks make requests nobody wrote in the test: litellm fetches its model cost
map when it is imported, the OpenAI Agents SDK uploads its traces after each run. Such a request
is never in a cassette recorded with another client, so it misses; the miss explanation then
names the client and the setting that stops the request (:func:`note_for`), instead of leaving
the user to wonder where ``GET /BerriAI/litellm/main/model_prices_and_context_window.json``
came from.

The table is :data:`KNOWN_SELF_FETCHES`: the client, the end of the request's path, where it
goes by default, and the note. Only the path is compared, never the host: each client lets a
setting move the request to another host (``LITELLM_MODEL_COST_MAP_URL``; ``OPENAI_BASE_URL``,
which also moves the trace upload into base-URL mode's loopback proxy). Checked against the
clients' sources: litellm's ``litellm_core_utils/get_model_cost_map.py``, openai-agents'
``tracing/processors.py`` and ``tracing/provider.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["KNOWN_SELF_FETCHES", "SelfFetch", "note_for"]


@dataclass(frozen=True, slots=True)
class SelfFetch:
    """A request ``client`` makes by itself, to a path ending in ``path_end`` (by default on
    ``default_host``); ``stop`` says what it is and how to turn it off."""

    client: str
    path_end: str
    default_host: str
    stop: str


KNOWN_SELF_FETCHES: tuple[SelfFetch, ...] = (
    SelfFetch(
        client="litellm",
        path_end="/model_prices_and_context_window.json",
        default_host="raw.githubusercontent.com",
        stop="litellm fetches its model cost map when imported; set "
        "LITELLM_LOCAL_MODEL_COST_MAP=True to use the copy bundled with it",
    ),
    SelfFetch(
        client="openai-agents",
        path_end="/traces/ingest",
        default_host="api.openai.com",
        stop="the OpenAI Agents SDK uploads its traces after each run; disable tracing "
        "(OPENAI_AGENTS_DISABLE_TRACING=1, or set_tracing_disabled(True)), or leave it: a "
        "failed upload is only logged by the SDK",
    ),
)


def note_for(request: str) -> str | None:
    """The note for ``request`` (``METHOD /path?query`` as a miss names it, or a URL) when a
    known client makes it on its own; ``None`` for any other request."""
    target = request.split(" ", 1)[-1]
    # A miss names the path itself (which may start with "//"); only a URL needs splitting.
    path = target.split("?", 1)[0] if target.startswith("/") else urlsplit(target).path
    for known in KNOWN_SELF_FETCHES:
        if path.endswith(known.path_end):
            return (
                f"this is a request {known.client} makes on its own (to {known.default_host} "
                f"unless configured otherwise): {known.stop}"
            )
    return None
