"""Snapshots of a captured stream by meaning: :func:`assert_matches_snapshot`.

A snapshot stores what a stream *means*, not its bytes: each event's type and fields without
the volatile ones (ids, ``created``, fingerprints, timestamps: the provider's and the contract's,
see :mod:`replayproxy._core.tools.meaning`, plus the JSON pointers in ``ignore``), how the body
ended, and the structural facts: the status, whether it was streamed (arrived in more than one
read), terminated once (exactly one terminal event, the last) and closed after the terminal. So
two recordings of the same turn match one snapshot, and an adapter or SDK upgrade runs against
the same expectations.

The file is JSON with sorted keys, indented, one event per list entry, in
``__snapshots__/<test module>/<name>.json`` beside the test (as syrupy lays them out); a name
with a ``/`` or ending in ``.json`` is a path used as given. A missing snapshot fails and says
how to write it; ``update=True``, ``REPLAYPROXY_SNAPSHOT_UPDATE=1`` (read when the assertion
runs) or pytest's ``--replayproxy-snapshot-update`` writes it (and rewrites one that differs).
A mismatch raises :class:`AssertionError` with one line per difference.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from replayproxy._core.check.contract import Contract, parse_contract
from replayproxy._core.providers import Provider, detect, parse
from replayproxy._core.tools.event_diff import diff_meanings
from replayproxy._core.tools.meaning import (
    EventMeaning,
    RawEvent,
    Volatile,
    event_meaning,
    normalise,
    volatile_paths,
)
from replayproxy._errors import UsageError
from replayproxy.testing._capture_data import Capture, terminal_for

__all__ = ["ENV_UPDATE", "FORMAT", "assert_matches_snapshot", "snapshot_of", "snapshot_path"]

ENV_UPDATE = "REPLAYPROXY_SNAPSHOT_UPDATE"
FORMAT = "replayproxy stream snapshot 1"
"""The ``format`` key of every snapshot file (a later layout gets another)."""

_HOW = (
    "write it with --replayproxy-snapshot-update (pytest) or REPLAYPROXY_SNAPSHOT_UPDATE=1 "
    "in the environment"
)
_UNSAFE = re.compile(r"[^\w.\[\]=+,-]")
_HERE = (__name__, "replayproxy.testing._capture")


def _caller_file() -> Path:
    """The file of the first caller outside this module and the capture (the test)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__") in _HERE:
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:  # pragma: no cover - there is always a caller
        return Path.cwd() / "snapshot"
    return Path(frame.f_code.co_filename).resolve()


def snapshot_path(name_or_path: str | os.PathLike[str], test_file: Path | None = None) -> Path:
    """Where the snapshot lives: a path (``os.PathLike``, with a ``/`` or ending ``.json``) as
    given; a name in ``__snapshots__/<stem of test_file>/<name>.json`` beside ``test_file``
    (the calling file when not given)."""
    if (
        isinstance(name_or_path, os.PathLike)
        or "/" in name_or_path
        or name_or_path.endswith(".json")
    ):
        return Path(name_or_path)
    if not name_or_path.strip():
        raise UsageError("a snapshot needs a name (or a path ending in .json)")
    source = test_file or _caller_file()
    safe = _UNSAFE.sub("_", name_or_path)
    return source.parent / "__snapshots__" / source.stem / f"{safe}.json"


def _contract(contract: Contract | str | os.PathLike[str] | None) -> Contract | None:
    if contract is None or isinstance(contract, Contract):
        return contract
    path = Path(contract)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise UsageError(f"contract {path}: cannot read ({e.strerror})") from None
    return parse_contract(text, fmt="json" if path.suffix == ".json" else "toml", name=path.stem)


def _provider(capture: Capture, provider: Provider | str | None) -> Provider | None:
    if isinstance(provider, Provider):
        return provider
    if provider is not None:
        return parse(provider)
    return detect(capture.url, capture.content_type or None)


class _Reading:
    """How a capture is read by meaning: the contract or provider and the volatile fields."""

    def __init__(
        self,
        capture: Capture,
        ignore: Iterable[str],
        contract: Contract | str | os.PathLike[str] | None,
        provider: Provider | str | None,
    ) -> None:
        self.contract = _contract(contract)
        # A contract describes the application's own events: no provider's fields apply.
        self.provider = None if self.contract is not None else _provider(capture, provider)
        self.volatile = volatile_paths(self.provider, self.contract, ignore)

    def document(self, capture: Capture) -> dict[str, Any]:
        type_field = None if self.contract is None else self.contract.type_field
        raws = [RawEvent(e.event, e.text) for e in capture.events]
        which = terminal_for(
            provider=self.provider,
            contract=self.contract,
            url=capture.url,
            content_type=capture.content_type,
        )
        found = [i for i, e in enumerate(capture.events) if which.matches(e)]
        once = None if not which else bool(raws) and found == [len(raws) - 1]
        return {
            "format": FORMAT,
            "status": capture.status,
            "end": capture.end,
            "streamed": len(capture.frames) > 1,
            "terminated_once": once,
            "closed_after_terminal": capture.closed_after_terminal,
            "events": [
                event_meaning(
                    r.name, r.text, type_field=type_field, volatile=self.volatile
                ).as_json()
                for r in raws
            ],
        }


def snapshot_of(
    capture: Capture,
    *,
    ignore: Iterable[str] = (),
    contract: Contract | str | os.PathLike[str] | None = None,
    provider: Provider | str | None = None,
) -> dict[str, Any]:
    """The snapshot document of ``capture`` (what :func:`assert_matches_snapshot` stores)."""
    return _Reading(capture, ignore, contract, provider).document(capture)


def _dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _write(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(_dumps(doc), encoding="utf-8")
    os.replace(tmp, path)  # atomic: a failed run never leaves half a snapshot


def _events(doc: dict[str, Any], path: Path) -> list[EventMeaning]:
    items = doc.get("events")
    if not isinstance(items, list) or not all(
        isinstance(e, dict) and isinstance(e.get("type"), str) and "data" in e for e in items
    ):
        raise UsageError(f"snapshot {path}: 'events' must be a list of {{type, data}} objects")
    return [EventMeaning(e["type"], e["data"]) for e in items]


def _differences(
    stored: dict[str, Any], now: dict[str, Any], path: Path, volatile: Volatile
) -> list[str]:
    lines = [
        f"{key}: {json.dumps(stored.get(key))} → {json.dumps(now[key])}"
        for key in sorted(now)
        if key != "events" and stored.get(key) != now[key]
    ]
    # The stored events are read with today's volatile fields too, so adding an ignore
    # pointer never needs the snapshot rewritten.
    old = normalise(_events(stored, path), volatile)
    new = normalise(_events(now, path), volatile)
    lines.extend(d.line for d in diff_meanings(old, new))
    return lines


def _updating(update: bool | None) -> bool:
    if update is not None:
        return update
    return os.environ.get(ENV_UPDATE, "").strip().lower() in ("1", "true", "yes", "on")


def assert_matches_snapshot(
    capture: Capture,
    name_or_path: str | os.PathLike[str],
    *,
    ignore: Iterable[str] = (),
    contract: Contract | str | os.PathLike[str] | None = None,
    provider: Provider | str | None = None,
    update: bool | None = None,
) -> None:
    """Compare ``capture`` by meaning with its snapshot (see the module doc); write it when
    updating (``update``, else ``REPLAYPROXY_SNAPSHOT_UPDATE``)."""
    path = snapshot_path(name_or_path)
    reading = _Reading(capture, ignore, contract, provider)
    now = reading.document(capture)
    updating = _updating(update)
    if not path.exists():
        if updating:
            _write(path, now)
            return
        raise AssertionError(f"no snapshot {path}: {_HOW}")
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise UsageError(f"snapshot {path} cannot be read ({e}); {_HOW} anew") from None
    if not isinstance(stored, dict):
        raise UsageError(f"snapshot {path} is not a JSON object; {_HOW} anew")
    lines = _differences(stored, now, path, reading.volatile)
    if not lines:
        return
    if updating:
        _write(path, now)
        return
    shown = "\n  ".join(lines)
    raise AssertionError(
        f"the stream does not match snapshot {path} ({len(lines)} difference(s)):\n  {shown}\n"
        f"if the change is intended, {_HOW}"
    )
