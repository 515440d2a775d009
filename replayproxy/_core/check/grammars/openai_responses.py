"""OpenAI Responses stream grammar (``POST /v1/responses``, ``stream: true``).

``event: <type>`` + ``data: {"type": <type>, "sequence_number": n, ...}``; ``sequence_number``
rises by 1 from 0; ``response.created`` first, ``in_progress`` before output; output items and
content parts bracket their events; ``.done`` texts equal the joined deltas; exactly one
terminal event, last. A ``data: [DONE]`` after it (OpenAI-compatible servers) is named:
openai-python stops reading at ``[DONE]`` on every stream type. A resumed stream
(``GET /v1/responses/{id}?stream=true&starting_after=N``, or one whose first event is not
``response.created`` and has a ``sequence_number`` above 0) starts mid-sequence: output items
and parts opened before it are adopted. Rules ``openai.responses.*``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from replayproxy._core.check.base import INVALID, Grammar, Report, RequestOptions, StreamEvent
from replayproxy._core.check.grammars.responses_items import identity_change

__all__ = ["OpenAIResponses"]

TERMINAL = {
    "response.completed": "completed",
    "response.failed": "failed",
    "response.incomplete": "incomplete",
    "error": None,
}
_KNOWN = frozenset(
    [
        "response.created",
        "response.queued",
        "response.in_progress",
        "response.completed",
        "response.failed",
        "response.incomplete",
        "error",
        "response.output_item.added",
        "response.output_item.done",
        "response.content_part.added",
        "response.content_part.done",
        "response.output_text.delta",
        "response.output_text.done",
        "response.output_text.annotation.added",
        "response.refusal.delta",
        "response.refusal.done",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done",
        "response.reasoning_text.delta",
        "response.reasoning_text.done",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.audio.delta",
        "response.audio.done",
        "response.audio.transcript.delta",
        "response.audio.transcript.done",
    ]
)
_KNOWN_FAMILIES = (
    "response.web_search_call.",
    "response.file_search_call.",
    "response.code_interpreter_call",
    "response.image_generation_call.",
    "response.mcp_call",
    "response.mcp_list_tools.",
    "response.shell_call",
)
# delta family -> the field of its .done event that must equal the joined deltas
_DONE_FIELDS = {
    "response.output_text": "text",
    "response.refusal": "refusal",
    "response.function_call_arguments": "arguments",
    "response.custom_tool_call_input": "input",
    "response.reasoning_text": "text",
    "response.reasoning_summary_text": "text",
    "response.code_interpreter_call_code": "code",
    "response.mcp_call_arguments": "arguments",
}
_PART_EVENTS = ("response.output_text.", "response.refusal.")


@dataclass
class _Item:
    item_id: Any
    done: bool = False
    added: Any = None  # the item as output_item.added gave it


def _part(value: Any) -> int | str | None:
    """An index or id as a key part (a malformed one, such as a list, as None)."""
    return value if isinstance(value, int | str) else None


def _text_key(p: dict[str, Any], family: str) -> tuple[Any, ...]:
    # output_index, not item_id: GitHub Copilot rotates item ids within one item.
    where = p.get("output_index")
    return (
        family,
        _part(p.get("item_id") if where is None else where),
        _part(p.get("content_index")),
        _part(p.get("summary_index")),
    )


class OpenAIResponses(Grammar):
    sentinels = frozenset({"[DONE]"})

    def __init__(self, report: Report, request: RequestOptions) -> None:
        super().__init__(report, request)
        self.started = False  # an event was seen
        self.seq: int | None = None
        self.lifecycle = False  # response.in_progress / queued seen
        self.terminal: StreamEvent | None = None
        self.after_reported = False
        self.sequenced: bool | None = None  # whether the stream carries sequence_number
        self.items: dict[int, _Item] = {}
        self.parts: dict[tuple[int, int], bool] = {}  # (output, content) -> done
        self.deltas: dict[tuple[Any, ...], list[str]] = {}
        self.unknown: set[str] = set()
        self.done: StreamEvent | None = None  # a data: [DONE] sentinel
        self.resumed = False
        self.url_told = False  # a request URL was given (told), so no guessing from the events
        self.starting_after: int | None = None
        self.adopted: set[int] = set()  # output items opened before a resumed stream began

    def told(self, url: str) -> None:
        try:
            parts = urlsplit(url)
        except ValueError:
            return
        self.url_told = True  # a POST that creates the response starts with response.created
        after = parse_qs(parts.query).get("starting_after", [""])[0]
        if after.isdigit():  # the server starts after event N: mid-sequence
            self.resumed, self.starting_after = True, int(after)

    def event(self, ev: StreamEvent) -> None:
        report = self.report
        p = ev.payload
        if self.done is not None:
            if not self.after_reported:
                self.after_reported = True
                report.at(
                    "openai.responses.terminal",
                    ev,
                    f"event after data: [DONE] (event {self.done.index}); openai-python stops "
                    "reading at [DONE], so it is never seen",
                )
            return
        if p is None:  # data: [DONE]
            self.done = ev
            if self.terminal is not None:
                report.note(
                    "data: [DONE] after the terminal event, as OpenAI-compatible servers send; "
                    "openai-python stops reading there"
                )
            return
        if p is INVALID:
            return
        if not isinstance(p, dict) or not isinstance(p.get("type"), str):
            report.at("openai.responses.event-name", ev, "the payload has no string 'type'")
            return
        kind: str = p["type"]
        if ev.name != kind:
            shown = "no event: line" if ev.name is None else f"event: {ev.name}"
            report.at("openai.responses.event-name", ev, f"{shown} but data.type is {kind!r}")
        first = not self.started
        self.started = True
        if first:
            self._resumed(kind, p.get("sequence_number"))
        self._sequence(ev, p.get("sequence_number"), first)
        if (
            self.terminal is not None
            and self.terminal.name == "error"
            and kind in ("response.failed", "response.incomplete")
        ):
            # OpenAI sends an error event and then response.failed: the SDK raises on the error
            # event, and clients that read on see the failed response. One terminal pair.
            self.report.note("an error event followed by response.failed, as OpenAI sends")
            self.terminal = ev
            self._terminal(ev, kind, p)
            return
        if self.terminal is not None:
            if not self.after_reported:
                self.after_reported = True
                report.at(
                    "openai.responses.terminal",
                    ev,
                    f"{kind} after the terminal event {self.terminal.name} "
                    f"(event {self.terminal.index})",
                )
            return
        if first and kind != "response.created" and not self.resumed:
            report.at(
                "openai.responses.created-first",
                ev,
                f"the first event is {kind}; the SDK raises 'Expected to have received "
                "response.created'",
            )
        if kind not in _KNOWN and not kind.startswith(_KNOWN_FAMILIES) and kind not in self.unknown:
            self.unknown.add(kind)
            report.at("openai.responses.unknown-type", ev, f"unknown event type {kind!r}")
        if kind in ("response.in_progress", "response.queued"):
            self.lifecycle = True
        if kind in TERMINAL:
            self.terminal = ev
            self._terminal(ev, kind, p)
            return
        if "output_index" in p and not self.lifecycle:
            self.lifecycle = True  # report once
            report.at(
                "openai.responses.in-progress",
                ev,
                f"{kind} before response.in_progress (or queued)",
            )
        self._nesting(ev, kind, p)
        family, _, tail = kind.rpartition(".")
        if family in _DONE_FIELDS:
            if tail == "delta" and isinstance(p.get("delta"), str):
                self.deltas.setdefault(_text_key(p, family), []).append(p["delta"])
            elif tail == "done":
                self._done_text(ev, family, p)

    def _resumed(self, kind: str, seq: Any) -> None:
        guessed = not self.url_told and kind != "response.created"  # no URL told it
        if not self.resumed and guessed and isinstance(seq, int) and seq > 0:
            self.resumed = True  # a stream that begins mid-sequence
        if self.resumed:
            self.lifecycle = True  # response.in_progress came before the resumed part
            self.report.note(
                "a resumed stream (GET /v1/responses/{id}?stream=true&starting_after=N): it "
                "starts mid-sequence, as the retrieve endpoint sends"
            )

    def _sequence(self, ev: StreamEvent, seq: Any, first: bool) -> None:
        if first:
            self.sequenced = isinstance(seq, int)
            if not self.sequenced:
                self.report.note(
                    "no sequence_number, as older OpenAI recordings and compatible servers send"
                )
        if not self.sequenced:
            if isinstance(seq, int):
                self.report.at(
                    "openai.responses.sequence",
                    ev,
                    "sequence_number appears mid-stream after events without it",
                )
                self.sequenced = True
                self.seq = seq
            return
        if not isinstance(seq, int):
            self.report.at("openai.responses.sequence", ev, "sequence_number is missing")
            return
        if first:
            expected = 0 if self.starting_after is None else self.starting_after + 1
            if seq != expected and not (self.resumed and self.starting_after is None):
                self.report.at(
                    "openai.responses.sequence-start",
                    ev,
                    f"sequence_number starts at {seq}, expected {expected}",
                )
        elif self.seq is not None and seq != self.seq + 1:
            self.report.at(
                "openai.responses.sequence",
                ev,
                f"sequence_number {seq} follows {self.seq}; resuming with starting_after "
                "would skip or repeat events",
            )
        self.seq = seq

    def _terminal(self, ev: StreamEvent, kind: str, p: dict[str, Any]) -> None:
        for (oi, ci), done in self.parts.items():
            if not done:
                self.report.at(
                    "openai.responses.nesting", ev, f"content part ({oi}, {ci}) never done"
                )
        for oi, item in self.items.items():
            if not item.done and kind == "response.completed":
                self.report.at("openai.responses.nesting", ev, f"output item {oi} never done")
        response = p.get("response")
        if kind == "error" or not isinstance(response, dict):
            return
        status = response.get("status")
        if status != TERMINAL[kind]:
            self.report.at(
                "openai.responses.terminal-status",
                ev,
                f"{kind} carries response.status {status!r}",
            )
        if kind == "response.completed" and not response.get("usage"):
            self.report.at(
                "openai.responses.terminal-status", ev, "response.completed carries no usage"
            )

    def _nesting(self, ev: StreamEvent, kind: str, p: dict[str, Any]) -> None:
        report = self.report
        oi = p.get("output_index")
        if not isinstance(oi, int):
            return
        item = self.items.get(oi)
        if kind == "response.output_item.added":
            if item is not None or oi != len(self.items):
                expected = len(self.items)
                what = "which was already added" if oi == expected else f"expected {expected}"
                report.at(
                    "openai.responses.nesting",
                    ev,
                    f"output_item.added for output_index {oi}, {what}",
                )
            if item is None:
                payload_item = p.get("item")
                item_id = payload_item.get("id") if isinstance(payload_item, dict) else None
                self.items[oi] = _Item(item_id, added=payload_item)
            return
        if item is None and self.resumed:  # added before the resumed stream began
            item = self.items[oi] = _Item(p.get("item_id"))
            self.adopted.add(oi)
        if item is None or item.done:
            state = "not added" if item is None else "already done"
            report.at(
                "openai.responses.nesting", ev, f"{kind} for output item {oi}, which is {state}"
            )
            return
        item_id = p.get("item_id")
        if item_id is not None and item.item_id is not None and item_id != item.item_id:
            report.at(
                "openai.responses.item-id",
                ev,
                f"item_id {item_id!r} differs from output item {oi}'s id {item.item_id!r} (as "
                "GitHub Copilot rotates ids); clients keyed by item_id lose the text",
            )
            item.item_id = item_id  # report each rotation once
        ci = p.get("content_index")
        if kind == "response.output_item.done":
            changed = identity_change(item.added, p.get("item"))
            if changed:
                report.at("openai.responses.item-identity", ev, f"output item {oi}: {changed}")
            open_parts = [c for (o, c), done in self.parts.items() if o == oi and not done]
            if open_parts:
                report.at(
                    "openai.responses.nesting",
                    ev,
                    f"output item {oi} done while content part {open_parts[0]} is open",
                )
            item.done = True
        elif kind == "response.content_part.added":
            if not isinstance(ci, int) or (oi, ci) in self.parts:
                report.at("openai.responses.nesting", ev, f"content part ({oi}, {ci}) re-added")
            else:
                self.parts[(oi, ci)] = False
        elif kind == "response.content_part.done" or kind.startswith(_PART_EVENTS):
            done = self.parts.get((oi, ci)) if isinstance(ci, int) else None
            if done is None and oi in self.adopted and isinstance(ci, int):
                done = self.parts[(oi, ci)] = False  # opened before the resumed stream began
            if done is None or done or not isinstance(ci, int):
                state = "not added" if done is None else "already done"
                report.at(
                    "openai.responses.nesting",
                    ev,
                    f"{kind} for content part ({oi}, {ci}), which is {state}",
                )
            elif kind == "response.content_part.done":
                self.parts[(oi, ci)] = True

    def _done_text(self, ev: StreamEvent, family: str, p: dict[str, Any]) -> None:
        field = _DONE_FIELDS[family]
        final = p.get(field)
        if not isinstance(final, str):
            return
        parts = self.deltas.pop(_text_key(p, family), None)
        if p.get("output_index") in self.adopted:
            return  # its first deltas came before the resumed stream began
        if parts is None:
            self.report.note(f"{family}.done without deltas, as LM Studio and GitHub Copilot send")
            return
        joined = "".join(parts)
        if joined != final:
            self.report.at(
                "openai.responses.done-text",
                ev,
                f"{family}.done {field} ({len(final)} chars) differs from the joined deltas "
                f"({len(joined)} chars)",
            )

    def finish(self, end: int) -> None:
        if self.terminal is None:
            self.report.add(
                "openai.responses.terminal",
                "the stream ends without response.completed/failed/incomplete or error; "
                "get_final_response raises, plain iteration ends quietly",
                offset=end,
            )
