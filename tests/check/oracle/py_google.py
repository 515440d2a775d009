"""google-genai reading Gemini streams: ``models.generate_content_stream`` iterated, the text
of the non-thought parts appended, function calls, usage and the finish reason kept."""

from __future__ import annotations

from tests.check.oracle.outcome import Delivered
from tests.check.oracle.readers import Read, Readers
from tests.check.oracle.server import HEADER
from tests.check.oracle.truth import GeminiCalls

__all__ = ["readers"]


def readers(base_url: str) -> Readers:
    from google import genai
    from google.genai import types

    client = genai.Client(
        api_key="oracle-key",
        http_options=types.HttpOptions(
            base_url=base_url, retry_options=types.HttpRetryOptions(attempts=1)
        ),
    )
    name = f"google-genai {genai.__version__}"

    def iterate(key: str) -> Delivered:
        text, calls, usage, finish = "", GeminiCalls(), None, None
        config = types.GenerateContentConfig(http_options=types.HttpOptions(headers={HEADER: key}))
        for chunk in client.models.generate_content_stream(
            model="gemini-2.5-flash", contents="hi", config=config
        ):
            if chunk.usage_metadata and chunk.usage_metadata.candidates_token_count is not None:
                usage = chunk.usage_metadata.candidates_token_count
            for cand in chunk.candidates or []:
                if (cand.index or 0) != 0:
                    continue
                for part in (cand.content.parts if cand.content else None) or []:
                    if part.text is not None and not part.thought:
                        text += part.text
                    if part.function_call is not None:
                        calls.add(part.function_call.model_dump(by_alias=True, exclude_none=True))
                if cand.finish_reason is not None:
                    finish = getattr(cand.finish_reason, "value", str(cand.finish_reason))
        return Delivered(text, calls.canonical(), usage, finish=finish)

    ways: list[Read] = [(name, "models.generate_content_stream() iteration", iterate)]
    return {"gemini": ways}
