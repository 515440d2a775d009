"""The catalogue of stream-contract rules: stable ids, severities and the SDK behaviour behind
each. Grammars report violations by rule id only; severity and explanation live here, once.

The principle (docs/guides/checker.md): an ``error`` is something a real client mishandles: it
raises, drops data, or misreports the end of the stream. What the provider documents differently but
clients accept is a ``warning``; a known provider dialect that clients accept is named in the
report's notes, not flagged. ``why`` records the client behaviour behind each grade. Rule ids never
change meaning; new rules get new ids.

Every rule of every family is registered here, in one table: a new module adds its rules to
``_ALL`` (or calls :func:`register`), and grammars report by id only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["RULES", "Rule", "Severity", "register", "rules_for"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: its id, severity, what it requires, and why a client cares."""

    id: str
    severity: Severity
    summary: str
    why: str


_ALL = [
    # --- generic SSE (every SSE provider) ---
    Rule("sse.bom", "error", "The body does not start with a UTF-8 BOM.",
         "openai-python and anthropic do not strip it: the first field name becomes "
         "'\\ufeffdata' (the first event vanishes) or '\\ufeffevent' (it loses its name, and "
         "the anthropic SDK ignores unnamed events)."),
    Rule("sse.utf8", "error", "Every line is valid UTF-8.",
         "SDKs decode with errors='strict' or replace characters silently."),
    Rule("sse.unterminated", "error", "The last event ends with a blank line.",
         "An event without its blank line at end of stream is discarded by every SSE "
         "decoder (WHATWG), silently."),
    Rule("sse.line-endings", "warning", "One line-ending style for the whole stream.",
         "Mixed endings delay dispatch in the anthropic SDK and openai-python <= 2.24, which "
         "split events only at a homogeneous \\n\\n, \\r\\r or \\r\\n\\r\\n."),
    Rule("sse.empty-event", "error", "No data-less events (extra blank lines after an id:, or "
         "blocks with event:/id:/retry: but no data:).",
         "openai-python dispatches them with empty data once an id was seen; .json() raises."),
    Rule("sse.id-nul", "error", "An id: field contains no NUL.",
         "WHATWG ignores such an id; clients that resume with Last-Event-ID lose their place."),
    Rule("sse.retry", "warning", "A retry: field is all ASCII digits.",
         "WHATWG clients (EventSource) ignore other values and keep their own reconnection "
         "delay; the SDKs ignore retry: entirely. Nothing is lost but a hint."),
    Rule("sse.json", "error", "Every data payload (joined data: lines) is one JSON value "
         "(the provider's sentinel such as [DONE] aside).",
         "openai-python and anthropic call json.loads on it: raw JSONDecodeError mid-stream."),
    Rule("sse.content-type", "error", "The Content-Type is text/event-stream.",
         "EventSource fails the connection and httpx-sse raises SSEError on any other type; "
         "clients that pick the decoder from the Content-Type read it as one JSON body."),
    # --- OpenAI Chat Completions ---
    Rule("openai.chat.event-field", "error", "Only data: fields, no event: lines.",
         "openai-python <= 2.24 raised on named events such as 'error'."),
    Rule("openai.chat.done-last", "error", "The last event is data: [DONE], nothing after it.",
         "Without [DONE] openai-python ends quietly, so a truncated stream looks complete "
         "(unless every choice finished and usage came: a named dialect); events after "
         "[DONE] are never read."),
    Rule("openai.chat.chunk-shape", "error", "Every chunk is a JSON object.",
         "openai-python builds a ChatCompletionChunk from each payload; a list or a number "
         "raises or yields an empty chunk."),
    Rule("openai.chat.object", "error", "Every chunk has object == 'chat.completion.chunk'.",
         "openai-python's .stream() helper drops every other chunk (its filter for Azure's "
         "content-filter events, whose object is ''): a server that sends 'chat.completion' "
         "on every chunk makes get_final_completion() raise AssertionError, and a few such "
         "chunks lose their text (measured). Plain iteration does not check it. Perplexity's "
         "last chunk 'chat.completion.done' is a named dialect."),
    Rule("openai.chat.stable-id", "error", "id and model are the same in every chunk.",
         "Stream accumulators take them from the first chunk; a change means chunks of "
         "two completions were mixed."),
    Rule("openai.chat.stable-fields", "warning", "system_fingerprint is stable and created "
         "never goes back.",
         "No client reads them after the first chunk. OpenAI keeps them fixed; Groq and xAI "
         "move created forward (a named dialect)."),
    Rule("openai.chat.choice-order", "error", "Choice index k first appears after index k-1.",
         "accumulate_delta appends new choices on IndexError, so a skipped index lands in the "
         "wrong slot."),
    Rule("openai.chat.delta-missing", "error", "Every choice carries a delta object.",
         "Measured by the SDK oracle on Azure's content-filter-offsets chunk: openai-python "
         "gives delta None, so chunk.choices[0].delta.content raises AttributeError, and the "
         ".stream() helper's get_final_completion() raises AttributeError too."),
    Rule("openai.chat.role-first", "warning", "The first delta of a choice sets "
         "role 'assistant'.", "OpenAI always sends it; accumulators default the role."),
    Rule("openai.chat.role-repeated", "error", "role is not repeated with a non-empty value.",
         "openai-python's stream helper (accumulate_delta) concatenates strings: the final "
         "message has role 'assistantassistant...', which the API rejects when the message is "
         "sent back (measured; many OpenAI-compatible servers repeat it, on every chunk or on "
         "a chunk after the finish)."),
    Rule("openai.chat.finish-reason", "error", "Each choice has a finish_reason from "
         "{stop, length, tool_calls, content_filter, function_call}.",
         "Apps branch on finish_reason (truncation vs. length); none means a truncated choice, "
         "unless usage and [DONE] end the stream (a named dialect: clients read None)."),
    Rule("openai.chat.finish-repeated", "warning", "A choice's finish_reason comes once.",
         "Measured by the SDK oracle: openai-python, openai-node and the Vercel AI SDK read a "
         "repeated finish chunk fine (the last value wins); some servers resend it."),
    Rule("openai.chat.after-finish", "error", "No delta content for a choice after its "
         "finish_reason (a role and empty strings are no content).",
         "The SDK keeps appending to a choice the app considers finished."),
    Rule("openai.chat.content-type", "error", "delta.content is a string or null.",
         "The usual `text += delta.content` raises TypeError on a list; openai-python's "
         ".stream() helper drops it and the text is lost (measured)."),
    Rule("openai.chat.annotation-index", "error", "After a choice's first delta.annotations, "
         "every annotations entry has an integer index.",
         "openai-python's accumulate_delta merges later lists entry by index and raises "
         "RuntimeError 'Expected list delta entry to have an `index` key' (measured); a "
         "single annotations delta is kept as is."),
    Rule("openai.chat.tool-call-index", "error", "Every tool call has an integer index; indexes "
         "start at 0 and first appear in order, without gaps.",
         "accumulate_delta inserts by index: a gap puts a call in the wrong slot; a call "
         "without index (as Mistral sends) makes the stream helper raise TypeError "
         "(measured)."),
    Rule("openai.chat.tool-call-first", "error", "The first delta of a tool call has id, "
         "type 'function' and function.name.",
         "Without them the accumulated call has no id/name to dispatch on."),
    Rule("openai.chat.tool-call-repeat", "error", "Later deltas of a tool call carry no "
         "non-empty id or function.name.",
         "accumulate_delta concatenates them: 'get_weatherget_weather'."),
    Rule("openai.chat.tool-call-arguments", "error", "A tool call's joined arguments parse "
         "as JSON.", "Apps json.loads the arguments to call the tool."),
    Rule("openai.chat.tool-call-finish", "warning", "A choice with tool calls finishes with "
         "'tool_calls'.", "Agent loops run tools only on finish_reason == 'tool_calls'."),
    Rule("openai.chat.usage-chunk", "error", "With stream_options.include_usage, some chunk "
         "carries usage.",
         "Apps read usage from the stream when they asked for it; without it they bill or "
         "budget with None. Where the usage sits is free: openai-python reads chunk.usage on "
         "any chunk, and DeepSeek, Groq and Mistral put it on the finish_reason chunk (a "
         "named dialect)."),
    Rule("openai.chat.usage-order", "warning", "No chunk with choices follows a usage-only "
         "chunk (choices == []).",
         "OpenAI sends the usage-only chunk last before [DONE]; code that takes usage from the "
         "last chunk finds none. openai-python itself does not care."),
    Rule("openai.chat.usage-unrequested", "warning", "Without stream_options.include_usage "
         "in the request, no chunk carries usage.",
         "Code reading chunk.choices[0] raises IndexError on an unasked-for usage-only chunk "
         "(choices == []), as xAI sends. Usage on a chunk that has choices is harmless and "
         "only named."),
    Rule("openai.chat.usage-total", "warning", "total_tokens == prompt_tokens + "
         "completion_tokens (+ reasoning tokens on some compatible servers).",
         "Billing and budget code trusts the totals."),
    Rule("openai.chat.obfuscation", "warning", "obfuscation, when present, is a string.",
         "It is padding; the SDK model types it as a string."),
    Rule("openai.chat.error-terminal", "error", "A mid-stream {\"error\": ...} chunk ends the "
         "stream.", "openai-python raises APIError on it; later events are never read."),
    # --- OpenAI Responses ---
    Rule("openai.responses.event-name", "warning", "Every event has an event: line equal to "
         "data.type.",
         "openai-python and the Vercel AI SDK dispatch on data.type, so they cope; only "
         "clients that dispatch on the SSE name (EventSource listeners) miss the event."),
    Rule("openai.responses.unknown-type", "warning", "Event types are known.",
         "A new type may mean an API change that the SDK's union does not model yet."),
    Rule("openai.responses.sequence", "error", "sequence_number rises by exactly 1 (when the "
         "stream carries it at all).",
         "A gap means events were lost on the way and resuming with starting_after skips or "
         "repeats events. Streams without any sequence_number (older recordings, compatible "
         "servers) are a named dialect: the SDK accepts them."),
    Rule("openai.responses.sequence-start", "warning", "sequence_number starts at 0.",
         "OpenAI starts at 0 (response.created)."),
    Rule("openai.responses.created-first", "error", "The first event is response.created.",
         "The SDK's ResponseStream raises 'Expected to have received response.created'."),
    Rule("openai.responses.in-progress", "warning", "response.in_progress (or queued) comes "
         "before any output event.",
         "OpenAI's lifecycle order; openai-python's ResponseStream builds its snapshot from "
         "response.created and does not need it."),
    Rule("openai.responses.nesting", "error", "output_item.added/.done and "
         "content_part.added/.done bracket every event of their output_index / content_index, "
         "and indexes appear in order from 0.",
         "The SDK indexes snapshot.output[output_index].content[content_index]: IndexError or "
         "text in the wrong item."),
    Rule("openai.responses.item-identity", "error", "output_item.done's item keeps the type, "
         "id and call_id output_item.added gave it.",
         "Measured by the SDK oracle: openai-python 3.x's responses.stream() raises RuntimeError "
         "'Completed output item identity changed' (2.x read it; seen in a recorded OpenAI "
         "tool_search_call whose call_id changed)."),
    Rule("openai.responses.item-id", "warning", "item_id stays the output item's id.",
         "openai-python indexes by output_index and copes; clients keyed by item_id (the "
         "Vercel AI SDK before it learnt GitHub Copilot's id rotation) lose the text."),
    Rule("openai.responses.done-text", "error", "A .done event's text/arguments equal the "
         "joined deltas (when there were deltas).",
         "Apps that use deltas and apps that use .done show different text. A .done without "
         "any delta (LM Studio, GitHub Copilot) is a named dialect."),
    Rule("openai.responses.terminal", "error", "Exactly one terminal event (response.completed, "
         ".failed, .incomplete or error), last; an error event may be followed by one "
         "response.failed.",
         "get_final_response raises without response.completed; a truncated stream otherwise "
         "ends quietly. OpenAI sends error then response.failed: the SDK raises on the first."),
    Rule("openai.responses.terminal-status", "warning", "The terminal response.status matches "
         "the event, and response.completed carries usage.", "Observed OpenAI behaviour."),
    # --- Anthropic Messages ---
    Rule("anthropic.event-name", "error", "Every event has an event: line equal to data.type.",
         "The anthropic SDK dispatches on the event name and silently drops unnamed events."),
    Rule("anthropic.message-start-first", "error", "The first event (pings aside) is "
         "message_start, and there is only one.",
         "MessageStream raises 'Unexpected event order, got X before \"message_start\"'."),
    Rule("anthropic.usage", "error", "message_start.message carries a usage object.",
         "Measured by the SDK oracle: anthropic-python's messages.stream() get_final_message() "
         "raises AttributeError (None has no output_tokens), anthropic-node's finalMessage() "
         "and the Vercel AI SDK raise too."),
    Rule("anthropic.block-index", "error", "The k-th content_block_start has index k.",
         "The SDK appends blocks without checking the index (TODO in its code), so deltas land "
         "in the wrong block or raise IndexError."),
    Rule("anthropic.block-nesting", "error", "Deltas and stops refer to a started, unstopped "
         "block; every block is stopped before message_delta.",
         "content[event.index] raises IndexError or updates a finished block."),
    Rule("anthropic.block-interleave", "warning", "Blocks do not interleave.",
         "Today Anthropic streams blocks one after another."),
    Rule("anthropic.delta-type", "error", "The delta type fits the block type (text_delta/"
         "citations_delta: text; input_json_delta: tool blocks; thinking_delta/signature_delta: "
         "thinking).", "The accumulator appends to a field the block does not have."),
    Rule("anthropic.partial-json", "error", "A tool block's joined partial_json is empty or "
         "parses as JSON.",
         "The SDK parses it with jiter; the tool input is garbage. One empty delta for an "
         "input of {} is what Anthropic sends: the SDK keeps the start's input."),
    Rule("anthropic.stop-reason", "error", "A message_delta with a known stop_reason comes "
         "after the last block and before message_stop.",
         "Apps branch on stop_reason (tool_use, max_tokens)."),
    Rule("anthropic.usage-decrease", "error", "message_delta usage.output_tokens never "
         "decreases.", "The SDK assigns it (it is cumulative), so a drop under-counts."),
    Rule("anthropic.message-stop-last", "error", "The stream ends with message_stop and "
         "nothing follows it.",
         "Without message_stop the SDK ends quietly: a truncated message looks complete."),
    Rule("anthropic.error-terminal", "error", "An error event ends the stream.",
         "The SDK raises APIStatusError on it; later events are never read."),
    # --- Gemini alt=sse ---
    Rule("gemini.data-prefix", "error", "Every non-blank line starts with 'data: ' (with the "
         "space): no comments, no event:/id: lines.",
         "google-genai treats any other line as raw JSON error text and corrupts the chunk."),
    Rule("gemini.crlf", "warning", "Lines end with CRLF.", "Gemini and Vertex send \\r\\n."),
    Rule("gemini.finish-reason", "error", "Exactly one chunk per candidate carries finishReason, "
         "and it is that candidate's last chunk.",
         "EOF without finishReason is a truncation google-genai does not report."),
    Rule("gemini.stable-ids", "warning", "responseId and modelVersion stay the same.",
         "Observed Gemini behaviour; a change means two responses were mixed."),
    Rule("gemini.usage-metadata", "warning", "The final chunk carries usageMetadata.",
         "Observed Gemini behaviour; apps read token counts from it."),
    Rule("gemini.function-call-args", "warning", "functionCall.args is a JSON object.",
         "Gemini sends function calls whole, args as an object."),
    Rule("gemini.thought-signature", "error", "A part's thoughtSignature is base64.",
         "Measured by the SDK oracle: google-genai raises ValidationError ('Data should be "
         "valid base64') while iterating the stream."),
    Rule("gemini.error-terminal", "error", "A chunk with an error ends the stream.",
         "google-genai raises on it; later chunks are never read."),
    # --- OpenAI Realtime (WebSocket server events) ---
    Rule("realtime.json", "error", "Every server message is a JSON object with a string type.",
         "The openai SDK's Realtime client json.loads every message: raw JSONDecodeError."),
    Rule("realtime.binary", "warning", "Server messages are text frames.",
         "The Realtime API sends JSON text; a binary frame means something else is talking."),
    Rule("realtime.session-first", "warning", "The first server event is session.created.",
         "Apps wait for session.created before they send session.update."),
    Rule("realtime.event-id", "warning", "Server event_id values do not repeat.",
         "Observed OpenAI behaviour; logs and deduplication key on event_id."),
    Rule("realtime.response-done", "error", "Each response.created reaches exactly one "
         "response.done, and response.done names a created response.",
         "Clients await response.done to end the turn: without it they wait forever (the "
         "classic socket closed mid-response); a second one ends a turn twice."),
    Rule("realtime.response-open", "error", "response.* events name an open response (after "
         "response.created, before its response.done).",
         "Accumulators keyed by response_id drop or misplace the event."),
    Rule("realtime.delta-item", "error", "Deltas and their .done events belong to an item "
         "added (response.output_item.added) and not yet done.",
         "Apps append deltas to the item by item_id: KeyError, or text in a closed item."),
    Rule("realtime.done-text", "error", "A .done event's text/transcript/arguments equal the "
         "joined deltas.", "Apps that use deltas and apps that use .done disagree."),
    # --- Gemini Live (BidiGenerateContent WebSocket) ---
    Rule("gemini.live.json", "error", "Every server message is a JSON object (text or binary "
         "frame).", "google-genai parses every message as JSON."),
    Rule("gemini.live.setup-first", "error", "The first server message is setupComplete.",
         "google-genai's live.connect waits for setupComplete before it returns the session."),
    Rule("gemini.live.turn-complete", "error", "A model turn ends with turnComplete (or "
         "interrupted) before the session ends.",
         "session.receive() yields until turnComplete: the turn never ends for the app."),
    # --- Bedrock (AWS event-stream) ---
    Rule("bedrock.prelude-crc", "error", "Every prelude CRC32 matches.",
         "botocore raises ChecksumMismatch."),
    Rule("bedrock.message-crc", "error", "Every message CRC32 matches.",
         "botocore raises ChecksumMismatch."),
    Rule("bedrock.length", "error", "total_length >= 16, headers fit, headers <= 128 KiB, "
         "payload <= 16 MiB.", "botocore raises InvalidHeadersLength/InvalidPayloadLength."),
    Rule("bedrock.headers", "error", "Headers are well formed and fit their section.",
         "botocore cannot parse the message."),
    Rule("bedrock.header-type", "error", "Header types are 0-9.",
         "botocore cannot parse the message."),
    Rule("bedrock.duplicate-header", "error", "No header name repeats.",
         "botocore raises DuplicateHeader."),
    Rule("bedrock.truncated", "error", "The body ends exactly at a message boundary.",
         "botocore waits forever for the rest of a partial message."),
    Rule("bedrock.message-type", "error", ":message-type is event, exception or error; events "
         "have :event-type and :content-type application/json.",
         "botocore maps the message by these headers."),
    Rule("bedrock.json", "error", "Every event payload is JSON.",
         "botocore's parser raises on it."),
    Rule("bedrock.converse-order", "error", "ConverseStream order: messageStart, content blocks, "
         "messageStop, metadata (last).", "SDK stream handlers assume it."),
    Rule("bedrock.converse-end", "error", "A ConverseStream ends with messageStop then metadata.",
         "A stream cut at a message boundary otherwise ends quietly."),
    Rule("bedrock.block-index", "error", "contentBlockIndex values start at 0, ascend, and "
         "each block is started before its deltas and stopped at most once.",
         "Accumulators index content blocks by contentBlockIndex."),
    Rule("bedrock.block-stop", "warning", "Each content block is stopped before the next "
         "starts and before the message stops.",
         "Measured by the SDK oracle: boto3 and the Vercel AI SDK read a stream with a "
         "contentBlockStop missing fine."),
    Rule("bedrock.tool-input", "error", "toolUse.input pieces join into valid JSON (or "
         "nothing, for a tool without arguments).", "Apps parse the tool input."),
    Rule("bedrock.exception-terminal", "error", "An exception message ends the stream.",
         "botocore raises on it; later messages are never read."),
    Rule("bedrock.invoke-chunk", "error", "InvokeModelWithResponseStream events are 'chunk' with "
         "a payload {\"bytes\": base64 JSON}.",
         "The Anthropic Bedrock decoder base64-decodes chunk.bytes into an SSE event."),
    # --- NDJSON framing (application streams checked against a contract) ---
    Rule("ndjson.utf8", "error", "Every line is valid UTF-8.",
         "JSON.parse / json.loads of a line with invalid bytes raises or silently replaces "
         "characters."),
    Rule("ndjson.json", "error", "Every non-blank line is one JSON value.",
         "Line readers call JSON.parse / json.loads per line: a half line raises mid-stream."),
    Rule("ndjson.unterminated", "error", "The last line ends with a newline.",
         "The usual reader (split on '\\n', keep the rest for the next read) drops a last line "
         "without its newline: the final event vanishes silently."),
    # --- application stream contracts (replayproxy check --contract FILE) ---
    Rule("contract.type", "error", "Every event has its type (the contract's JSON field, or "
         "the SSE event: name).",
         "The client dispatches on the type: an event without one is dropped or hits the "
         "default branch."),
    Rule("contract.start", "error", "The first event is one of the contract's start events.",
         "The first event identifies the turn; a client that starts elsewhere has no turn to "
         "attach deltas to."),
    Rule("contract.terminal", "error", "Exactly one terminal event, and it is the last event; "
         "the stream does not end without one.",
         "A client that treats the closed connection as the end reports a cut stream as a "
         "finished turn; events after the terminal event are never read."),
    Rule("contract.order", "error", "The event types follow the contract's order grammar.",
         "Client state machines assume the order: a delta after committed, or a second "
         "started, lands in the wrong turn or is dropped."),
    Rule("contract.same", "error", "The contract's 'same' fields are in every event, with the "
         "first event's value.",
         "Clients route events by the turn id: a missing or changed id mixes two turns."),
    Rule("contract.required", "error", "Each event carries the fields the contract requires "
         "for its type.", "The client reads them (the delta text, the committed message id)."),
    Rule("contract.record", "error", "Each event carries the fields fields.record names for its "
         "type, equal to the stored record's values when the check is given the record.",
         "The client shows what the stream says; a committed turn whose version or id differs "
         "from the row the app stored is a turn the user sees but the database does not hold."),
    Rule("contract.upstream", "error", "After an incomplete upstream stream, the stream ends only "
         "with a terminal event upstream.incomplete allows.",
         "A turn committed on a cut provider stream stores and shows half an answer as a "
         "finished one; nothing downstream can tell."),
    # --- endpoint recordings: content coding and delivery timing ---
    Rule("http.compressed-stream", "warning", "The stream is sent without Content-Encoding.",
         "Browsers' EventSource and fetch, and httpx, decode gzip, deflate and br chunk by chunk, "
         "so no client breaks on the coding itself; the harm is buffering: compression "
         "middleware holds the events until its buffer fills or the response ends (see "
         "stream.buffered)."),
    Rule("http.content-encoding", "error", "A content-coded body decodes (gzip, deflate, br, "
         "zstd).",
         "httpx raises DecodingError and browsers fail the request "
         "(ERR_CONTENT_DECODING_FAILED): no event past the bad bytes reaches the app."),
    Rule("stream.buffered", "error", "With incremental = true: the events do not all arrive "
         "within 1 ms of each other after a wait of 50 ms or more.",
         "A buffered stream shows nothing, then everything at once: the user stares at a "
         "spinner for the whole generation, and read timeouts fire on long answers."),
]  # fmt: skip

RULES: dict[str, Rule] = {}


def register(rules: list[Rule]) -> None:
    """Add a family of rules to :data:`RULES` (ids are unique: a clash is a programming error)."""
    for rule in rules:
        if rule.id in RULES:
            raise ValueError(f"rule {rule.id!r} registered twice")
        RULES[rule.id] = rule


register(_ALL)


def rules_for(prefix: str) -> list[Rule]:
    """The rules whose id starts with ``prefix`` (``"sse."``, ``"anthropic."`` ...)."""
    return [rule for rule in RULES.values() if rule.id.startswith(prefix)]
