"""The NDJSON layer of the checker: one JSON value per ``\\n``-terminated line (JSON Lines,
``application/x-ndjson``), for application streams checked against a contract.

Lines are cut at ``\\n`` (a ``\\r`` before it is dropped); blank lines are keep-alives and not
events. Every line is decoded as UTF-8 and JSON once it is complete, so the result does not
depend on how the bytes were split. Rules ``ndjson.*``; the JSON of each line goes to the
grammar as a :class:`StreamEvent` (``name`` is ``None``: NDJSON has no event names).
"""

from __future__ import annotations

from replayproxy._core.check.base import INVALID, Grammar, Report, StreamEvent
from replayproxy._core.check.jsonload import JSONDecodeError, loads

__all__ = ["NDJSONLayer"]


class NDJSONLayer:
    """Feeds bytes, cuts lines, checks and decodes each one; see the module doc."""

    def __init__(self, report: Report, grammar: Grammar, *, reader_flushes: bool = False) -> None:
        self.report = report
        self.grammar = grammar
        # the API's own clients read a last line without its newline (httpx's iter_lines,
        # ollama-js): name it instead of reporting ndjson.unterminated
        self.reader_flushes = reader_flushes
        self._buffer = bytearray()
        self._start = 0  # body offset of the first byte in _buffer
        self._index = 0
        self._end = 0

    @property
    def dispatched(self) -> int:
        """Events (non-blank lines) handed to the grammar so far."""
        return self._index

    def feed(self, data: bytes) -> None:
        self._end += len(data)
        self._buffer += data
        while (cut := self._buffer.find(b"\n")) >= 0:
            line = bytes(self._buffer[:cut])
            del self._buffer[: cut + 1]
            start = self._start
            self._start += cut + 1
            self._line(line[:-1] if line.endswith(b"\r") else line, start, self._start)

    def close(self) -> None:
        if self._buffer.strip() and self.reader_flushes:
            self.report.note(
                "the last line has no closing newline; the API's own clients (ollama-python's "
                "httpx iter_lines, ollama-js) still read it"
            )
            self._line(bytes(self._buffer), self._start, self._end)
        elif self._buffer.strip():
            line = bytes(self._buffer)
            self.report.add(
                "ndjson.unterminated",
                f"the stream ends inside a line ({len(line)} bytes without the closing newline); "
                "line readers that wait for '\\n' drop it",
                event=self._index,
                offset=self._start,
            )
            self._line(line, self._start, self._end)
        self._buffer.clear()
        self.grammar.finish(self._end)

    def _line(self, raw: bytes, start: int, end: int) -> None:
        if not raw.strip():
            return
        index = self._index
        self._index += 1
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", "replace")
            self.report.add("ndjson.utf8", "invalid UTF-8 in this line", event=index, offset=start)
        payload: object
        if text in self.grammar.sentinels:
            payload = None
        else:
            try:
                payload = loads(text)
            except JSONDecodeError as e:
                payload = INVALID
                shown = text if len(text) <= 60 else text[:57] + "..."
                self.report.add(
                    "ndjson.json",
                    f"line is not JSON ({e.msg}): {shown!r}",
                    event=index,
                    offset=start,
                )
        self.grammar.event(StreamEvent(index, start, end, None, text, payload))
