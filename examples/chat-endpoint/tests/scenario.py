"""What the example's tests ask the endpoint, and what the recorded provider stream says."""

from __future__ import annotations

from pathlib import Path

CASSETTES = Path(__file__).parent / "cassettes"
STOP = CASSETTES / "chat-stop.cassette"  # the simulator's OpenAI stream, finish_reason stop
LENGTH = CASSETTES / "chat-length.cassette"  # the same stream, finish_reason length
CONTRACT = Path(__file__).parent / "chat-turn.contract.toml"

MESSAGE = "Invent a holiday and describe it."
API_KEY = "sk-example-not-a-real-key"
