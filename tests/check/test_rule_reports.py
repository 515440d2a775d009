"""Every checker rule's case (tests/check/cases.py) reported exactly: at which event and byte,
and with which message, for each violation it gives.

test_check_rules.py shows each case breaks only its rule; this pins what a user reads in the
report (the event index, the byte offset and the message with its values), so a checker that
reports the right rule at the wrong event, or a message with a wrong number or name, fails.
"""

from __future__ import annotations

import pytest

from replayproxy._core.check import RULES, check_frames
from tests.check.cases import CASES

# rule -> [(event index, byte offset, message), ...] in report order
EXPECTED: dict[str, list[tuple[int | None, int | None, str]]] = {
    "anthropic.block-index": [
        (
            1,
            470,
            (
                "content_block_start has index 1, expected 0; the SDK appends blocks "
                "without checking, so later deltas go to the wrong block"
            ),
        ),
    ],
    "anthropic.block-interleave": [
        (2, 587, "block 1 starts while block 0 is still open"),
    ],
    "anthropic.block-nesting": [
        (9, 1420, "block 0 is not stopped before message_delta"),
    ],
    "anthropic.delta-type": [
        (3, 622, "a 'thinking_delta' delta in a 'text' block"),
    ],
    "anthropic.error-terminal": [
        (5, 838, "content_block_delta after the error event (event 4); the SDK raised there"),
    ],
    "anthropic.event-name": [
        (2, 587, "event: pong but data.type is 'ping'; the SDK dispatches on the name"),
    ],
    "anthropic.message-start-first": [
        (
            0,
            0,
            (
                "content_block_start before message_start; MessageStream raises "
                "'Unexpected event order'"
            ),
        ),
        (1, 117, "a second message_start"),
    ],
    "anthropic.message-stop-last": [
        (
            None,
            1709,
            (
                "the stream ends without message_stop; the anthropic SDK ends "
                "quietly, so a truncated message looks complete"
            ),
        ),
    ],
    "anthropic.partial-json": [
        (
            6,
            1134,
            (
                'the joined partial_json of block 0 does not parse: \'{"elements": '
                '[{"location": "San Francisco", "temperature"...\''
            ),
        ),
    ],
    "anthropic.stop-reason": [
        (10, 1493, "unknown stop_reason 'finished'"),
    ],
    "anthropic.usage-decrease": [
        (
            10,
            1493,
            "usage.output_tokens drops from 1 to 0; it is cumulative and the SDK assigns it",
        ),
    ],
    "bedrock.block-index": [
        (1, 118, "contentBlockDelta for block 1, expected block 0 to start"),
    ],
    "bedrock.converse-end": [
        (None, 2301, "the stream ends without metadata (truncated at a message boundary)"),
    ],
    "bedrock.converse-order": [
        (
            14,
            2114,
            "metadata after block; expected messageStart, content blocks, messageStop, metadata",
        ),
        (
            15,
            2321,
            (
                "messageStop after metadata; expected messageStart, content blocks, "
                "messageStop, metadata"
            ),
        ),
    ],
    "bedrock.duplicate-header": [
        (16, 2508, "header 'a' appears twice"),
    ],
    "bedrock.exception-terminal": [
        (
            4,
            565,
            (
                "contentBlockDelta after the exception throttlingException (message "
                "3); botocore raised there"
            ),
        ),
    ],
    "bedrock.header-type": [
        (16, 2508, "header 'a' has unknown type 42"),
    ],
    "bedrock.headers": [
        (16, 2508, "a header runs past the headers section"),
    ],
    "bedrock.invoke-chunk": [
        (2, 921, "chonk event without a string 'bytes' field; expected chunk events"),
    ],
    "bedrock.json": [
        (
            3,
            429,
            (
                "the payload of contentBlockDelta is not JSON (Expecting property "
                "name enclosed in double quotes: line 1 column 2 (char 1))"
            ),
        ),
    ],
    "bedrock.length": [
        (16, 2508, "impossible lengths (total 8, headers 0; need total >= 16 + headers)"),
    ],
    "bedrock.message-crc": [
        (3, 429, "message CRC mismatch (stored 0x9e251137, computed 0x873e2076)"),
    ],
    "bedrock.message-type": [
        (0, 0, ":message-type is 'weird', expected event, exception or error"),
    ],
    "bedrock.prelude-crc": [
        (3, 429, "prelude CRC mismatch (stored 0x8424d12f, computed 0x84dbd12f)"),
    ],
    "bedrock.tool-input": [
        (4, 628, "block 0's toolUse.input does not parse as JSON: '{\"loc\":1'"),
    ],
    "bedrock.truncated": [
        (16, 2508, "stream ends inside a message (10 byte(s) of an incomplete message)"),
    ],
    "contract.order": [
        (
            5,
            417,
            (
                "delta after usage; the order 'started (delta | tool_call)* usage? "
                "(committed | rejected)' allows committed | rejected here"
            ),
        ),
    ],
    "contract.required": [
        (4, 337, "the delta event lacks 'text'"),
    ],
    "contract.same": [
        (
            3,
            262,
            (
                "turn_id changed from 't_8f2c41' to 't_0000aa': events of two turns "
                "are mixed in one stream"
            ),
        ),
    ],
    "contract.start": [
        (
            0,
            0,
            (
                "the first event is delta, expected started: the client cannot tell "
                "which turn this stream is"
            ),
        ),
    ],
    "contract.terminal": [
        (
            None,
            477,
            (
                "the stream ends after usage without a terminal event (committed | "
                "rejected); a client must not treat the closed connection as a "
                "finished turn"
            ),
        ),
    ],
    "contract.type": [
        (1, 98, "no field 'type': the event has no type to dispatch on"),
    ],
    "gemini.crlf": [
        (0, 0, "line endings other than CRLF"),
    ],
    "gemini.data-prefix": [
        (
            1,
            349,
            (
                "a comment line; google-genai accepts only 'data: ' lines and feeds "
                "any other line into its JSON error buffer"
            ),
        ),
    ],
    "gemini.error-terminal": [
        (2, 427, "a chunk after the error chunk"),
    ],
    "gemini.finish-reason": [
        (
            None,
            2001,
            (
                "the stream ends without a finishReason for candidate 0; google-genai"
                " does not report this truncation"
            ),
        ),
    ],
    "gemini.function-call-args": [
        (0, 0, "functionCall 'f' has args of type str, not an object"),
    ],
    "gemini.stable-ids": [
        (1, 349, "responseId changed from 'bH6LaZW8Fp_3nsEPqtaSwQ4' to 'other'"),
    ],
    "gemini.usage-metadata": [
        (2, 728, "the final chunk has no usageMetadata"),
    ],
    "ndjson.json": [
        (
            3,
            247,
            (
                "line is not JSON (Expecting property name enclosed in double "
                'quotes): \'{"type":"delta",\''
            ),
        ),
    ],
    "ndjson.unterminated": [
        (
            6,
            447,
            (
                "the stream ends inside a line (63 bytes without the closing "
                "newline); line readers that wait for '\\n' drop it"
            ),
        ),
    ],
    "ndjson.utf8": [
        (4, 317, "invalid UTF-8 in this line"),
    ],
    "openai.chat.after-finish": [
        (302, 99892, "choice 0 has delta content after its finish_reason 'stop' (event 301)"),
    ],
    "openai.chat.choice-order": [
        (
            0,
            0,
            (
                "choice 1 appears before choice 0; openai-python appends new choices,"
                " so it lands in the wrong slot"
            ),
        ),
    ],
    "openai.chat.chunk-shape": [
        (
            3,
            1019,
            (
                "the chunk is a JSON list, not an object; openai-python cannot build "
                "a ChatCompletionChunk from it"
            ),
        ),
    ],
    "openai.chat.done-last": [
        (
            None,
            99892,
            (
                "the stream ends without data: [DONE]; openai-python ends quietly, so"
                " a truncated stream looks complete"
            ),
        ),
    ],
    "openai.chat.content-type": [
        (
            3,
            1019,
            (
                "delta.content of choice 0 is a JSON list, not a string (as Mistral's "
                "Magistral reasoning models send); the usual `text += delta.content` raises "
                "TypeError and the .stream() helper drops it"
            ),
        ),
    ],
    "openai.chat.annotation-index": [
        (
            4,
            1388,
            (
                "delta.annotations entry 0 of choice 0 has no integer index after an earlier "
                "annotations delta; openai-python's .stream() helper raises RuntimeError "
                "'Expected list delta entry to have an `index` key'"
            ),
        ),
    ],
    "openai.chat.error-terminal": [
        (
            4,
            1108,
            (
                "event after the error chunk (event 3); openai-python raised APIError"
                " there and never reads it"
            ),
        ),
    ],
    "openai.chat.event-field": [
        (
            0,
            0,
            (
                "event: message line in a Chat Completions stream (only data: is "
                "sent); older openai-python raises on named events"
            ),
        ),
    ],
    "openai.chat.finish-reason": [
        (301, 99579, "choice 0 has unknown finish_reason 'done'"),
    ],
    "openai.chat.obfuscation": [
        (4, 1348, "obfuscation is not a string"),
    ],
    "openai.chat.object": [
        (
            3,
            1019,
            (
                "object is 'chat.completion', expected 'chat.completion.chunk'; "
                "openai-python's .stream() helper drops the chunk "
                "(get_final_completion() raises AssertionError when it drops them all)"
            ),
        ),
    ],
    "openai.chat.role-first": [
        (0, 0, "the first delta of choice 0 does not set role 'assistant'"),
    ],
    "openai.chat.role-repeated": [
        (
            2,
            690,
            (
                "choice 0 repeats role 'assistant'; openai-python's .stream() helper "
                "concatenates it into an invalid role ('assistantassistant')"
            ),
        ),
    ],
    "openai.chat.stable-fields": [
        (5, 1677, "created goes back from 1770933892 to 1"),
    ],
    "openai.chat.stable-id": [
        (5, 1677, "model changed from 'gpt-4.1-nano-2025-04-14' to 'gpt-4o'"),
    ],
    "openai.chat.tool-call-arguments": [
        (
            227,
            51737,
            "the arguments of tool call 0 (choice 0) do not parse as JSON: '{\"location\":'",
        ),
    ],
    "openai.chat.tool-call-finish": [
        (228, 52080, "choice 0 made tool calls but finished with 'stop'"),
    ],
    "openai.chat.tool-call-first": [
        (227, 51737, "the first delta of tool call 0 (choice 0) lacks id"),
    ],
    "openai.chat.tool-call-index": [
        (227, 51737, "tool call 1 of choice 0 appears before tool call 0"),
    ],
    "openai.chat.tool-call-repeat": [
        (228, 52080, "tool call 0 (choice 0) repeats function.name; openai-python concatenates it"),
    ],
    "openai.chat.usage-chunk": [
        (None, 99906, "the request set stream_options.include_usage but no usage chunk came"),
    ],
    "openai.chat.usage-order": [
        (
            4,
            1524,
            (
                "a chunk with choices after the usage-only chunk (event 3); code that"
                " reads usage from the last chunk before [DONE] finds none"
            ),
        ),
    ],
    "openai.chat.usage-total": [
        (302, 99892, "total_tokens 999 != prompt_tokens 16 + completion_tokens 300"),
    ],
    "openai.chat.usage-unrequested": [
        (
            302,
            99892,
            (
                "a usage-only chunk (choices == []) although the request did not ask "
                "for stream_options.include_usage; code reading chunk.choices[0] "
                "raises IndexError on it"
            ),
        ),
    ],
    "openai.responses.created-first": [
        (
            0,
            0,
            (
                "the first event is response.in_progress; the SDK raises 'Expected to"
                " have received response.created'"
            ),
        ),
    ],
    "openai.responses.done-text": [
        (
            181,
            56167,
            (
                "response.output_text.done text (14 chars) differs from the joined "
                "deltas (3645 chars)"
            ),
        ),
    ],
    "openai.responses.event-name": [
        (
            4,
            2368,
            "event: responses.output_item.added but data.type is 'response.output_item.added'",
        ),
    ],
    "openai.responses.in-progress": [
        (1, 963, "response.output_item.added before response.in_progress (or queued)"),
    ],
    "openai.responses.item-id": [
        (
            48,
            15289,
            (
                "item_id 'msg_rotated' differs from output item 13's id "
                "'msg_0cc96ac817fdc57e006933374a84348198a4e1ac9bc0c4607b' (as GitHub "
                "Copilot rotates ids); clients keyed by item_id lose the text"
            ),
        ),
        (
            49,
            15525,
            (
                "item_id 'msg_0cc96ac817fdc57e006933374a84348198a4e1ac9bc0c4607b' "
                "differs from output item 13's id 'msg_rotated' (as GitHub Copilot "
                "rotates ids); clients keyed by item_id lose the text"
            ),
        ),
    ],
    "openai.responses.nesting": [
        (183, 74449, "output item 0 never done"),
    ],
    "openai.responses.sequence": [
        (
            5,
            2602,
            (
                "sequence_number 50 follows 4; resuming with starting_after would "
                "skip or repeat events"
            ),
        ),
        (
            6,
            2805,
            (
                "sequence_number 6 follows 50; resuming with starting_after would "
                "skip or repeat events"
            ),
        ),
    ],
    "openai.responses.sequence-start": [
        (0, 0, "sequence_number starts at 1, expected 0"),
    ],
    "openai.responses.terminal": [
        (
            None,
            74667,
            (
                "the stream ends without response.completed/failed/incomplete or "
                "error; get_final_response raises, plain iteration ends quietly"
            ),
        ),
    ],
    "openai.responses.terminal-status": [
        (184, 74667, "response.completed carries response.status 'in_progress'"),
    ],
    "openai.responses.unknown-type": [
        (63, 19517, "unknown event type 'response.output_text.annotation.new'"),
    ],
    "sse.bom": [
        (
            0,
            0,
            (
                "the body starts with a UTF-8 BOM (EF BB BF); openai-python and "
                "anthropic do not strip it, so the first event is lost (or loses its "
                "event: name): remove it"
            ),
        ),
    ],
    "sse.content-type": [
        (
            None,
            None,
            (
                "Content-Type is 'application/json', not text/event-stream; SDKs will"
                " not decode it as a stream"
            ),
        ),
    ],
    "sse.empty-event": [
        (
            1,
            367,
            (
                "an extra blank line after an id: was seen; openai-python dispatches "
                "it as an event with empty data and .json() raises"
            ),
        ),
    ],
    "sse.id-nul": [
        (0, 0, "id: field contains NUL; it is ignored"),
    ],
    "sse.json": [
        (2, 587, "data is not JSON (Expecting ',' delimiter): '{\"type\": \"ping\"'"),
    ],
    "sse.line-endings": [
        (
            4,
            742,
            (
                "line endings mix LF+CRLF; the anthropic SDK and openai-python <= "
                "2.24 dispatch such events late: use one style"
            ),
        ),
    ],
    "sse.retry": [
        (0, 0, "'retry: 1s' is not all digits; it is ignored"),
    ],
    "sse.unterminated": [
        (
            12,
            1760,
            (
                "the stream ends inside an event (34 bytes without the closing blank "
                "line); every SSE decoder drops it silently"
            ),
        ),
    ],
    "sse.utf8": [
        (3, 622, "invalid UTF-8 in this event (shown as U+FFFD)"),
    ],
    "bedrock.invoke-stop": [
        (
            None,
            252,
            (
                "the stream ends without a chunk with completionReason, the final chunk of Amazon "
                "Titan's InvokeModel stream, nor Bedrock's amazon-bedrock-invocationMetrics "
                "(truncated at a message boundary?)"
            ),
        ),
    ],
    "ollama.done": [
        (
            None,
            618,
            (
                "the stream ends without a done: true line; ollama-python ends quietly, so a "
                "truncated answer looks complete"
            ),
        ),
    ],
    "ollama.chunk-shape": [
        (
            2,
            251,
            "the line is a JSON list, not an object; ollama-python cannot build a response from it",
        ),
    ],
    "cohere.message-end": [
        (
            None,
            2537,
            (
                "the stream ends without message-end; the SDK ends quietly, so a truncated answer "
                "looks complete"
            ),
        ),
    ],
    "cohere.order": [
        (1, 197, "content-delta for content 0, which is not open"),
    ],
    "cohere.event-name": [
        (1, 197, "event: content-begin but data.type is 'content-start'"),
    ],
    "anthropic.complete.stop": [
        (
            None,
            313,
            (
                "the stream ends without a completion event carrying stop_reason; the SDK ends "
                "quietly, so a truncated completion looks complete"
            ),
        ),
    ],
    "anthropic.complete.event-name": [
        (1, 141, "event: message with data.type 'completion'"),
    ],
    "openai.chat.finish-repeated": [
        (302, 99892, "choice 0 has a second finish_reason 'stop' (first 'stop' at event 301)"),
    ],
    "openai.chat.delta-missing": [
        (
            3,
            1019,
            (
                "choice 0 has no delta object; openai-python gives delta None, so "
                "chunk.choices[0].delta.content raises AttributeError, and so does the "
                ".stream() helper's get_final_completion()"
            ),
        ),
    ],
    "gemini.thought-signature": [
        (
            0,
            0,
            (
                "thoughtSignature '<redacted>' is not base64; google-genai raises "
                "ValidationError reading the chunk"
            ),
        ),
    ],
    "anthropic.usage": [
        (
            0,
            0,
            (
                "message_start has no message.usage; anthropic-python's get_final_message() "
                "raises AttributeError, anthropic-node and the Vercel AI SDK raise too"
            ),
        ),
    ],
    "bedrock.block-stop": [
        (13, 1989, "content block 0 is never stopped"),
    ],
    "openai.responses.item-identity": [
        (
            3,
            2152,
            (
                "output item 0: id 'rs_0cc96ac817fdc57e0069333706f5748198ad6f9d56c74ba528' -> "
                "'rs_other'"
            ),
        ),
    ],
}


def test_every_case_has_its_expected_report() -> None:
    """The table covers every case (a new rule gets its expected report here too)."""
    assert sorted(EXPECTED) == sorted(CASES)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_the_report_of_each_case_is_exact(rule: str) -> None:
    """The case's violations: its rule and severity, at these events and bytes, with these
    messages, in this order."""
    case = CASES[rule]
    violations = check_frames(
        [case.body], case.provider, request=case.request, content_type=case.content_type
    )
    assert {(v.rule, v.severity) for v in violations} == {(rule, RULES[rule].severity)}
    assert [(v.event, v.offset, v.message) for v in violations] == EXPECTED[rule]


@pytest.mark.parametrize(
    "content_type", ["text/event-stream", "Text/Event-Stream; charset=utf-8", " text/event-stream "]
)
def test_an_event_stream_content_type_with_parameters_or_case_is_no_violation(
    content_type: str,
) -> None:
    """sse.content-type compares the media type alone, case-blind: parameters are allowed."""
    case = CASES["sse.content-type"]
    assert check_frames([case.body], case.provider, content_type=content_type) == []
