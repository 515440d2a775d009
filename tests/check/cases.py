"""Per-rule test cases: for every rule, a real base stream (clean) and a minimal mutation of
it that breaks exactly that rule.

A case is built from the real payloads in ``replayproxy/testing/payloads`` (framed by
``tests.check.framing``); only the payloads a mutation touches are re-serialized.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from replayproxy._core.check import Contract, RequestOptions
from replayproxy._core.wire.eventstream import encode_event, encode_exception, encode_message
from tests.check.contract_cases import APP_BASES, app_cases
from tests.check.family_cases import FAMILY_BASES, family_cases
from tests.check.framing import bedrock_messages, frame_sse, payload_lines

__all__ = ["BASES", "CASES", "Case", "base_body"]


@dataclass(frozen=True)
class Case:
    """``provider`` checks ``body``; ``base`` names the clean stream it was derived from."""

    base: str
    provider: str | Contract
    body: bytes
    request: RequestOptions = field(default_factory=RequestOptions)
    content_type: str | None = None


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def _objs(name: str) -> list[Any]:
    return [json.loads(p) for p in payload_lines(name)]


def _tool_objs() -> list[Any]:
    # xAI moves `created` forward (a genuine openai.chat.stable-fields warning); pin it so the
    # base is clean and each case shows only its own rule.
    objs = _objs("openai-chat-tool-call")
    for obj in objs:
        obj["created"] = objs[0]["created"]
    return objs


def _sse(name: str, objs: list[Any]) -> list[bytes]:
    return frame_sse(name, [_dumps(o) for o in objs])


def _join(events: list[bytes]) -> bytes:
    return b"".join(events)


def _invoke(objs: list[Any]) -> list[bytes]:
    """Anthropic events wrapped as Bedrock InvokeModelWithResponseStream chunks."""
    out = []
    for i, obj in enumerate(objs):
        wrapped = {"bytes": base64.b64encode(_dumps(obj)).decode(), "p": "abcdefgh"[: i % 8]}
        out.append(encode_event("chunk", _dumps(wrapped)))
    return out


def _converse(objs: list[Any]) -> list[bytes]:
    out = []
    for obj in objs:
        ((event_type, inner),) = obj.items()
        out.append(encode_event(event_type, _dumps(inner)))
    return out


def _converse_tool() -> list[Any]:
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"contentBlockIndex": 0,
                               "start": {"toolUse": {"toolUseId": "t1", "name": "weather"}}}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{\"loc"}}}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "\":1}"}}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "tool_use"}},
        {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 2, "totalTokens": 3}}},
    ]  # fmt: skip


CHAT_REQ = RequestOptions(include_usage=True)

# base name -> (provider, body builder, request)
BASES: dict[str, tuple[str | Contract, Callable[[], bytes], RequestOptions]] = {
    "openai-chat-text": (
        "openai-chat",
        lambda: _join(_sse("openai-chat-text", _objs("openai-chat-text"))),
        CHAT_REQ,
    ),
    "openai-chat-tool-call": (
        "openai-chat",
        lambda: _join(_sse("openai-chat-tool-call", _tool_objs())),
        CHAT_REQ,
    ),
    "openai-responses": (
        "openai-responses",
        lambda: _join(_sse("openai-responses", _objs("openai-responses"))),
        RequestOptions(),
    ),
    "anthropic-text": (
        "anthropic",
        lambda: _join(_sse("anthropic-text", _objs("anthropic-text"))),
        RequestOptions(),
    ),
    "anthropic-tool-use": (
        "anthropic",
        lambda: _join(_sse("anthropic-tool-use", _objs("anthropic-tool-use"))),
        RequestOptions(),
    ),
    "gemini-text": (
        "gemini",
        lambda: _join(_sse("gemini-text", _objs("gemini-text"))),
        RequestOptions(),
    ),
    "bedrock-converse": (
        "bedrock-converse",
        lambda: _join(bedrock_messages()),
        RequestOptions(),
    ),
    "bedrock-converse-tool": (
        "bedrock-converse",
        lambda: _join(_converse(_converse_tool())),
        RequestOptions(),
    ),
    "bedrock-invoke": (
        "bedrock-invoke",
        lambda: _join(_invoke(_objs("anthropic-text"))),
        RequestOptions(),
    ),
}


BASES.update({name: (c, body, RequestOptions()) for name, (c, body) in APP_BASES.items()})
BASES.update({name: (p, body, RequestOptions()) for name, (p, body) in FAMILY_BASES.items()})


def base_body(name: str) -> bytes:
    return BASES[name][1]()


def _case(base: str, body: bytes, **kwargs: Any) -> Case:
    provider, _, request = BASES[base]
    kwargs.setdefault("request", request)
    return Case(base, provider, body, **kwargs)


def _mod(objs: list[Any], i: int, fn: Callable[[Any], object]) -> list[Any]:
    fn(objs[i])
    return objs


def _resequence(objs: list[Any]) -> list[Any]:
    for n, obj in enumerate(objs):
        obj["sequence_number"] = n
    return objs


def _set(path: list[Any], value: Any) -> Callable[[Any], None]:
    def apply(obj: Any) -> None:
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = value

    return apply


def _del(path: list[Any]) -> Callable[[Any], None]:
    def apply(obj: Any) -> None:
        for key in path[:-1]:
            obj = obj[key]
        del obj[path[-1]]

    return apply


def _raw_message(headers: bytes, payload: bytes) -> bytes:
    """An event-stream message with arbitrary header bytes and correct CRCs."""
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


def _cases() -> dict[str, Case]:
    c: dict[str, Case] = {}
    chat = "openai-chat-text"
    tool = "openai-chat-tool-call"
    resp = "openai-responses"
    anth = "anthropic-text"
    gem = "gemini-text"

    def chat_objs() -> list[Any]:
        return _objs(chat)

    def chat_body(objs: list[Any]) -> bytes:
        return _join(_sse(chat, objs))

    def tool_body(objs: list[Any]) -> bytes:
        return _join(_sse(tool, objs))

    def resp_body(objs: list[Any]) -> bytes:
        return _join(_sse(resp, objs))

    def anth_body(objs: list[Any]) -> bytes:
        return _join(_sse(anth, objs))

    def gem_body(objs: list[Any]) -> bytes:
        return _join(_sse(gem, objs))

    # --- generic SSE ---
    ev = _sse(anth, _objs(anth))
    c["sse.bom"] = _case(anth, b"\xef\xbb\xbf" + _join(ev))
    utf = list(ev)
    utf[3] = utf[3].replace(b'"text":"', b'"text":"\xff', 1)
    c["sse.utf8"] = _case(anth, _join(utf))
    c["sse.unterminated"] = _case(anth, _join(ev) + b'event: ping\ndata: {"type":"ping"}\n')
    mixed = list(ev)
    mixed[4] = mixed[4].replace(b"\n", b"\r\n")
    c["sse.line-endings"] = _case(anth, _join(mixed))
    ch = _sse(chat, chat_objs())
    c["sse.empty-event"] = _case(chat, _join([b"id: 1\n" + ch[0], b"\n", *ch[1:]]))
    c["sse.id-nul"] = _case(chat, _join([b"id: a\x00b\n" + ch[0], *ch[1:]]))
    c["sse.retry"] = _case(chat, _join([b"retry: 1s\n" + ch[0], *ch[1:]]))
    bad = list(ev)
    bad[2] = b'event: ping\ndata: {"type": "ping"\n\n'
    c["sse.json"] = _case(anth, _join(bad))
    c["sse.content-type"] = _case(anth, _join(ev), content_type="application/json")

    # --- OpenAI Chat ---
    c["openai.chat.event-field"] = _case(chat, _join([b"event: message\n" + ch[0], *ch[1:]]))
    # cut before the usage chunk too: [DONE] missing after finish_reason and usage is a dialect
    c["openai.chat.done-last"] = _case(chat, _join(ch[:-2]), request=RequestOptions())
    c["openai.chat.object"] = _case(
        chat, chat_body(_mod(chat_objs(), 3, _set(["object"], "chat.completion")))
    )
    c["openai.chat.stable-id"] = _case(
        chat, chat_body(_mod(chat_objs(), 5, _set(["model"], "gpt-4o")))
    )
    c["openai.chat.stable-fields"] = _case(
        chat, chat_body(_mod(chat_objs(), 5, _set(["created"], 1)))
    )
    objs = chat_objs()
    for o in objs:
        for choice in o["choices"]:
            choice["index"] = 1
    c["openai.chat.choice-order"] = _case(chat, chat_body(objs))
    c["openai.chat.role-first"] = _case(
        chat, chat_body(_mod(chat_objs(), 0, _del(["choices", 0, "delta", "role"])))
    )
    c["openai.chat.role-repeated"] = _case(
        chat, chat_body(_mod(chat_objs(), 2, _set(["choices", 0, "delta", "role"], "assistant")))
    )
    finish_at = next(
        i
        for i, o in enumerate(chat_objs())
        if o["choices"] and o["choices"][0].get("finish_reason")
    )
    c["openai.chat.finish-reason"] = _case(
        chat, chat_body(_mod(chat_objs(), finish_at, _set(["choices", 0, "finish_reason"], "done")))
    )
    objs = chat_objs()
    objs.insert(finish_at + 1, json.loads(json.dumps(objs[3])))
    c["openai.chat.after-finish"] = _case(chat, chat_body(objs))
    objs = chat_objs()
    objs.insert(finish_at + 1, json.loads(json.dumps(objs[finish_at])))
    c["openai.chat.finish-repeated"] = _case(chat, chat_body(objs))
    c["openai.chat.delta-missing"] = _case(
        chat, chat_body(_mod(chat_objs(), 3, _del(["choices", 0, "delta"])))
    )
    c["openai.chat.content-type"] = _case(
        chat,
        chat_body(
            _mod(chat_objs(), 3, _set(["choices", 0, "delta", "content"], [{"type": "text"}]))
        ),
    )
    objs = chat_objs()
    for i in (3, 4):  # two annotations deltas: the second is merged by index
        objs[i]["choices"][0]["delta"]["annotations"] = [{"type": "url_citation"}]
    c["openai.chat.annotation-index"] = _case(chat, chat_body(objs))
    call_at = next(
        i
        for i, o in enumerate(_tool_objs())
        if o["choices"] and "tool_calls" in o["choices"][0]["delta"]
    )
    c["openai.chat.tool-call-index"] = _case(
        tool,
        tool_body(
            _mod(_tool_objs(), call_at, _set(["choices", 0, "delta", "tool_calls", 0, "index"], 1))
        ),
    )
    c["openai.chat.tool-call-first"] = _case(
        tool,
        tool_body(
            _mod(_tool_objs(), call_at, _del(["choices", 0, "delta", "tool_calls", 0, "id"]))
        ),
    )
    objs = _tool_objs()
    extra = json.loads(json.dumps(objs[call_at]))
    extra["choices"][0]["delta"] = {
        "tool_calls": [{"index": 0, "function": {"name": "weather", "arguments": ""}}]
    }
    objs.insert(call_at + 1, extra)
    c["openai.chat.tool-call-repeat"] = _case(tool, tool_body(objs))
    c["openai.chat.tool-call-arguments"] = _case(
        tool,
        tool_body(
            _mod(
                _tool_objs(),
                call_at,
                _set(
                    ["choices", 0, "delta", "tool_calls", 0, "function", "arguments"],
                    '{"location":',
                ),
            )
        ),
    )
    tfinish = next(
        i
        for i, o in enumerate(_tool_objs())
        if o["choices"] and o["choices"][0].get("finish_reason")
    )
    c["openai.chat.tool-call-finish"] = _case(
        tool, tool_body(_mod(_tool_objs(), tfinish, _set(["choices", 0, "finish_reason"], "stop")))
    )
    c["openai.chat.usage-chunk"] = _case(chat, chat_body(chat_objs()[:-1]))
    c["openai.chat.usage-unrequested"] = _case(
        chat, chat_body(chat_objs()), request=RequestOptions(include_usage=False)
    )
    c["openai.chat.usage-total"] = _case(
        chat, chat_body(_mod(chat_objs(), -1, _set(["usage", "total_tokens"], 999)))
    )
    c["openai.chat.obfuscation"] = _case(
        chat, chat_body(_mod(chat_objs(), 4, _set(["obfuscation"], 5)))
    )
    objs = chat_objs()
    objs[3] = {
        "error": {"message": "overloaded", "type": "server_error", "param": None, "code": None}
    }
    c["openai.chat.error-terminal"] = _case(chat, chat_body(objs))
    cv = _sse(chat, chat_objs())
    c["openai.chat.chunk-shape"] = _case(chat, _join([*cv[:3], b"data: [1, 2]\n\n", *cv[3:]]))
    objs = chat_objs()
    usage_only = objs.pop()  # the last chunk: choices == [], usage set
    objs.insert(3, usage_only)
    c["openai.chat.usage-order"] = _case(chat, chat_body(objs))

    # --- OpenAI Responses ---
    rv = _sse(resp, _objs(resp))
    c["openai.responses.event-name"] = _case(
        resp, _join([*rv[:4], rv[4].replace(b"event: response.", b"event: responses.", 1), *rv[5:]])
    )
    ann = next(
        i for i, o in enumerate(_objs(resp)) if o["type"] == "response.output_text.annotation.added"
    )
    objs = _objs(resp)
    objs[ann]["type"] = "response.output_text.annotation.new"
    c["openai.responses.unknown-type"] = _case(resp, resp_body(objs))
    c["openai.responses.sequence"] = _case(
        resp, resp_body(_mod(_objs(resp), 5, _set(["sequence_number"], 50)))
    )
    objs = _objs(resp)
    for o in objs:
        o["sequence_number"] += 1
    c["openai.responses.sequence-start"] = _case(resp, resp_body(objs))
    objs = _objs(resp)
    objs[0], objs[1] = objs[1], objs[0]
    c["openai.responses.created-first"] = _case(resp, resp_body(_resequence(objs)))
    c["openai.responses.in-progress"] = _case(
        resp,
        resp_body(_resequence([o for o in _objs(resp) if o["type"] != "response.in_progress"])),
    )
    objs = _objs(resp)
    first_done = next(i for i, o in enumerate(objs) if o["type"] == "response.output_item.done")
    del objs[first_done]
    c["openai.responses.nesting"] = _case(resp, resp_body(_resequence(objs)))
    text_done = next(
        i for i, o in enumerate(_objs(resp)) if o["type"] == "response.output_text.done"
    )
    c["openai.responses.done-text"] = _case(
        resp, resp_body(_mod(_objs(resp), text_done, _set(["text"], "something else")))
    )
    c["openai.responses.terminal"] = _case(resp, resp_body(_objs(resp)[:-1]))
    delta_at = next(
        i for i, o in enumerate(_objs(resp)) if o["type"] == "response.output_text.delta"
    )
    c["openai.responses.item-id"] = _case(
        resp, resp_body(_mod(_objs(resp), delta_at, _set(["item_id"], "msg_rotated")))
    )
    done_at = next(i for i, o in enumerate(_objs(resp)) if o["type"] == "response.output_item.done")
    c["openai.responses.item-identity"] = _case(
        resp, resp_body(_mod(_objs(resp), done_at, _set(["item", "id"], "rs_other")))
    )
    c["openai.responses.terminal-status"] = _case(
        resp, resp_body(_mod(_objs(resp), -1, _set(["response", "status"], "in_progress")))
    )

    # --- Anthropic ---
    c["anthropic.event-name"] = _case(
        anth, _join([*ev[:2], ev[2].replace(b"event: ping", b"event: pong"), *ev[3:]])
    )
    objs = _objs(anth)
    objs[0], objs[1] = objs[1], objs[0]
    c["anthropic.message-start-first"] = _case(anth, anth_body(objs))
    objs = _objs(anth)
    for o in objs:
        if "index" in o:
            o["index"] = 1
    c["anthropic.block-index"] = _case(anth, anth_body(objs))
    c["anthropic.block-nesting"] = _case(
        anth, anth_body([o for o in _objs(anth) if o["type"] != "content_block_stop"])
    )
    objs = _objs(anth)
    objs.insert(
        2,
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    )
    stop = next(i for i, o in enumerate(objs) if o["type"] == "message_delta")
    objs.insert(stop, {"type": "content_block_stop", "index": 1})
    c["anthropic.block-interleave"] = _case(anth, anth_body(objs))
    c["anthropic.delta-type"] = _case(
        anth,
        anth_body(
            _mod(_objs(anth), 3, _set(["delta"], {"type": "thinking_delta", "thinking": "hm"}))
        ),
    )
    tobjs = _objs("anthropic-tool-use")
    last_json = max(i for i, o in enumerate(tobjs) if o["type"] == "content_block_delta")
    tobjs[last_json]["delta"]["partial_json"] += "}"
    c["anthropic.partial-json"] = _case(
        "anthropic-tool-use", _join(_sse("anthropic-tool-use", tobjs))
    )
    mdelta = next(i for i, o in enumerate(_objs(anth)) if o["type"] == "message_delta")
    c["anthropic.stop-reason"] = _case(
        anth, anth_body(_mod(_objs(anth), mdelta, _set(["delta", "stop_reason"], "finished")))
    )
    c["anthropic.usage-decrease"] = _case(
        anth, anth_body(_mod(_objs(anth), mdelta, _set(["usage", "output_tokens"], 0)))
    )
    c["anthropic.message-stop-last"] = _case(anth, anth_body(_objs(anth)[:-1]))
    objs = _objs(anth)
    objs.insert(
        4, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    c["anthropic.error-terminal"] = _case(anth, anth_body(objs))

    # --- Gemini ---
    gv = _sse(gem, _objs(gem))
    c["gemini.data-prefix"] = _case(gem, _join([gv[0], b": keepalive\r\n\r\n", *gv[1:]]))
    c["gemini.crlf"] = _case(gem, _join([e.replace(b"\r\n", b"\n") for e in gv]))
    objs = _objs(gem)
    objs[0]["candidates"][0]["content"]["parts"][0]["thoughtSignature"] = "<redacted>"
    c["gemini.thought-signature"] = _case(gem, gem_body(objs))
    c["anthropic.usage"] = _case(anth, anth_body(_mod(_objs(anth), 0, _del(["message", "usage"]))))
    c["gemini.finish-reason"] = _case(
        gem, gem_body(_mod(_objs(gem), -1, _del(["candidates", 0, "finishReason"])))
    )
    c["gemini.stable-ids"] = _case(
        gem, gem_body(_mod(_objs(gem), 1, _set(["responseId"], "other")))
    )
    c["gemini.usage-metadata"] = _case(gem, gem_body(_mod(_objs(gem), -1, _del(["usageMetadata"]))))
    objs = _objs(gem)
    objs[0]["candidates"][0]["content"]["parts"].append(
        {"functionCall": {"name": "f", "args": "{}"}}
    )
    c["gemini.function-call-args"] = _case(gem, gem_body(objs))
    objs = _objs(gem)
    objs.insert(1, {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}})
    c["gemini.error-terminal"] = _case(gem, gem_body(objs))

    # --- Bedrock ---
    bm = bedrock_messages()
    bad = bytearray(bm[3])
    bad[9] ^= 0xFF
    c["bedrock.prelude-crc"] = _case("bedrock-converse", _join([*bm[:3], bytes(bad), *bm[4:]]))
    bad = bytearray(bm[3])
    bad[-6] ^= 0x01
    c["bedrock.message-crc"] = _case("bedrock-converse", _join([*bm[:3], bytes(bad), *bm[4:]]))
    short = struct.pack(">II", 8, 0)
    c["bedrock.length"] = _case(
        "bedrock-converse", _join([*bm, short + struct.pack(">I", zlib.crc32(short)), b"\x00" * 4])
    )
    c["bedrock.headers"] = _case(
        "bedrock-converse", _join([*bm, _raw_message(b"\x01a\x07\x00\x10ab", b"{}")])
    )
    c["bedrock.header-type"] = _case(
        "bedrock-converse", _join([*bm, _raw_message(b"\x01a\x2a", b"{}")])
    )
    c["bedrock.duplicate-header"] = _case(
        "bedrock-converse", _join([*bm, encode_message([("a", "1"), ("a", "2")], b"{}")])
    )
    c["bedrock.truncated"] = _case("bedrock-converse", _join([*bm, bm[-1][:10]]))
    start = encode_message(
        [
            (":event-type", "messageStart"),
            (":content-type", "application/json"),
            (":message-type", "weird"),
        ],
        b'{"role":"assistant"}',
    )
    c["bedrock.message-type"] = _case("bedrock-converse", _join([start, *bm[1:]]))
    c["bedrock.json"] = _case(
        "bedrock-converse",
        _join([*bm[:3], encode_event("contentBlockDelta", b"{not json"), *bm[3:]]),
    )
    c["bedrock.converse-order"] = _case("bedrock-converse", _join([*bm[:-2], bm[-1], bm[-2]]))
    c["bedrock.converse-end"] = _case("bedrock-converse", _join(bm[:-1]))
    objs = _objs("bedrock-converse")
    for o in objs:
        for inner in o.values():
            if "contentBlockIndex" in inner:
                inner["contentBlockIndex"] = 1
    c["bedrock.block-index"] = _case("bedrock-converse", _join(_converse(objs)))
    objs = _objs("bedrock-converse")
    first_stop = next(i for i, o in enumerate(objs) if "contentBlockStop" in o)
    c["bedrock.block-stop"] = _case(
        "bedrock-converse", _join(_converse(objs[:first_stop] + objs[first_stop + 1 :]))
    )
    objs = _converse_tool()
    objs[3]["contentBlockDelta"]["delta"]["toolUse"]["input"] = '":1'
    c["bedrock.tool-input"] = _case("bedrock-converse-tool", _join(_converse(objs)))
    exc = encode_exception("throttlingException", b'{"message":"slow down"}')
    c["bedrock.exception-terminal"] = _case("bedrock-converse", _join([*bm[:3], exc, *bm[3:]]))
    iv = _invoke(_objs(anth))
    c["bedrock.invoke-chunk"] = _case(
        "bedrock-invoke", _join([*iv[:2], encode_event("chonk", b'{"bytes":""}'), *iv[2:]])
    )
    for rule, (base, contract, body) in app_cases().items():
        c[rule] = Case(base, contract, body)
    for rule, (base, body) in family_cases().items():
        c[rule] = Case(base, FAMILY_BASES[base][0], body)
    return c  # fmt: skip


CASES = _cases()
