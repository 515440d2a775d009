"""``replayproxy cassette edit``: parse the edit options and apply
:mod:`replayproxy._core.tools.edit`.

The operations themselves (and their fixed order) live in the pure core; this module turns
option strings into an :class:`~replayproxy._core.tools.edit.Edits` value and writes the result
atomically with :func:`replayproxy._store.save`.
"""

from __future__ import annotations

from pathlib import Path

import click

from replayproxy import _store as store
from replayproxy._cli._cassette_common import interaction_option, load_cassette, warn
from replayproxy._core.cassette import texttokens
from replayproxy._core.cassette.model import EndKind
from replayproxy._core.json.pointer import format_pointer
from replayproxy._core.tools.edit import Edits, apply
from replayproxy._core.tools.event_field import parse_field_edit
from replayproxy._errors import UsageError

__all__ = ["edit"]


def _is_number(text: str) -> bool:
    """ASCII digits only: ``str.isdigit`` is also true for "¹" or "٣", which ``int`` refuses
    or reads as another number."""
    return text.isascii() and text.isdigit()


def _merge_range(text: str) -> tuple[int, int]:
    first, sep, last = text.partition("-")
    if not (_is_number(first) and (not sep or _is_number(last))):
        raise UsageError(f"bad --merge {text!r}: expected A-B (frame numbers, 0 = first)")
    return int(first), int(last if sep else first)


def _insert(text: str) -> tuple[int, bytes]:
    n, sep, data = text.partition("=")
    if not sep or not _is_number(n.strip()):
        raise UsageError(f"bad --insert-event {text!r}: expected N=TEXT (TEXT may use \\n)")
    try:
        return int(n), texttokens.unescape(data)
    except UsageError as e:
        raise UsageError(f"bad --insert-event {text!r}: {e}") from None


def _redact_pointer(field: str) -> str:
    """``--redact-json`` takes a JSON pointer (``/messages/0/content``) like every other
    option; a dotted path (``messages.0.content``, the old form) still works, with a warning
    naming the pointer to use instead."""
    if field.startswith("/"):
        return field
    pointer = format_pointer(field.split("."))
    warn(f"--redact-json {field}: dotted paths are deprecated; use the JSON pointer {pointer}")
    return pointer


def _end(text: str | None) -> tuple[EndKind | None, float | None]:
    if text is None:
        return None, None
    kind_s, _, at_s = text.partition("@")
    kind = None
    if kind_s:
        try:
            kind = EndKind(kind_s)
        except ValueError:
            valid = ", ".join(k.value for k in EndKind)
            raise UsageError(f"bad --end {text!r}: kind must be one of {valid}") from None
    try:
        at = float(at_s) if at_s else None
    except ValueError:
        raise UsageError(f"bad --end {text!r}: expected KIND[@SECONDS]") from None
    return kind, at


@click.command(short_help="Edit a cassette (events, timing, ending...).")
@click.argument("path", metavar="CASSETTE")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    metavar="OUT",
    help="Where to write the edited cassette.",
)
@click.option("--in-place", is_flag=True, help="Overwrite CASSETTE itself (atomically).")
@interaction_option
@click.option("--delete", is_flag=True, help="Remove the selected interactions.")
@click.option("--redact-header", multiple=True, metavar="NAME", help="Redact a header's value.")
@click.option(
    "--redact-json",
    multiple=True,
    metavar="POINTER",
    help="Redact a request-body JSON field at this JSON pointer (/messages/0/content; "
    "* = any key/item).",
)
@click.option(
    "--bake-fault",
    multiple=True,
    metavar="SPEC",
    help="Apply a fault to the recording for good (same functions as at replay).",
)
@click.option(
    "--insert-event",
    multiple=True,
    metavar="N=TEXT",
    help="Insert TEXT (escapes: \\n \\r \\t \\xNN) before event N.",
)
@click.option("--drop-event", multiple=True, type=int, metavar="N", help="Remove event N.")
@click.option("--duplicate-event", multiple=True, type=int, metavar="N", help="Send event N twice.")
@click.option(
    "--set-event-field",
    "set_event_field",
    multiple=True,
    type=(int, str, str),
    metavar="N POINTER JSON",
    help="Set the JSON field at POINTER inside event N to JSON (e.g. 3 "
    "/choices/0/finish_reason '\"length\"'); framing and frame times stay.",
)
@click.option(
    "--truncate",
    metavar="POS",
    help="Cut the body at POS (events=N, frames=N, bytes=N, time=SECONDS); the ending kind stays.",
)
@click.option("--split", multiple=True, metavar="POS", help="Add a frame boundary at POS.")
@click.option("--merge", multiple=True, metavar="A-B", help="Merge frames A..B into one.")
@click.option("--rechunk", metavar="MODE", help="events (a frame per event), one, or bytes=N.")
@click.option("--gap", type=float, metavar="SECONDS", help="Space frames evenly.")
@click.option("--ttfb", type=float, metavar="SECONDS", help="Set the time to first byte.")
@click.option("--speed", type=float, help="Divide every time by this (2 = twice as fast).")
@click.option(
    "--end",
    "end_text",
    metavar="KIND[@SECONDS]",
    help="Set how (and when) the response ends: complete, reset, incomplete, hang...",
)
@click.option("--fault", multiple=True, metavar="SPEC", help="Attach a fault (validated).")
@click.option("--remove-fault", multiple=True, metavar="SPEC", help="Remove a fault, or all.")
def edit(
    path: str,
    output: str | None,
    in_place: bool,
    indices: tuple[int, ...],
    delete: bool,
    redact_header: tuple[str, ...],
    redact_json: tuple[str, ...],
    bake_fault: tuple[str, ...],
    insert_event: tuple[str, ...],
    drop_event: tuple[int, ...],
    duplicate_event: tuple[int, ...],
    set_event_field: tuple[tuple[int, str, str], ...],
    truncate: str | None,
    split: tuple[str, ...],
    merge: tuple[str, ...],
    rechunk: str | None,
    gap: float | None,
    ttfb: float | None,
    speed: float | None,
    end_text: str | None,
    fault: tuple[str, ...],
    remove_fault: tuple[str, ...],
) -> None:
    """Edit a cassette: write the result to -o OUT (or --in-place). Operations apply in a
    fixed order (docs/guides/editing.md): delete, redact, bake, events, truncate, frames, timing,
    end, faults."""
    if in_place == (output is not None):
        raise UsageError("give exactly one of -o OUT or --in-place")
    target = path if in_place else str(output)
    if not in_place and Path(target).resolve() == Path(path).resolve():
        raise UsageError(f"{target} is the input cassette; pass --in-place to overwrite it")
    kind, at = _end(end_text)
    edits = Edits(
        select=indices,
        delete=delete,
        redact_headers=redact_header,
        redact_json=tuple(_redact_pointer(f) for f in redact_json),
        bake=bake_fault,
        insert_events=tuple(_insert(t) for t in insert_event),
        drop_events=drop_event,
        duplicate_events=duplicate_event,
        set_event_fields=tuple(parse_field_edit(*t) for t in set_event_field),
        truncate=truncate,
        split=split,
        merge=tuple(_merge_range(m) for m in merge),
        rechunk=rechunk,
        gap=gap,
        ttfb=ttfb,
        speed=speed,
        end=kind,
        end_at=at,
        remove_faults=remove_fault,
        add_faults=fault,
    )
    if edits.is_empty():
        raise UsageError("no edit given (see replayproxy cassette edit --help)")
    store.save(target, apply(load_cassette(path), edits))
