"""What openai-python's Responses ``.stream()`` helper requires of an output item's two shapes,
``response.output_item.added`` and ``.done`` (pure): the same identity, as the helper computes
it (openai-python 3.x raises RuntimeError 'Completed output item identity changed' otherwise)."""

from __future__ import annotations

from typing import Any

__all__ = ["identity_change"]

# Items the helper identifies by call_id alone (their id may be filled in by .done).
_BY_CALL_ID = ("function_call", "custom_tool_call", "shell_call", "shell_call_output")


def _identity(item: dict[str, Any]) -> tuple[Any, Any, Any]:
    kind = item.get("type")
    return kind, None if kind in _BY_CALL_ID else item.get("id"), item.get("call_id")


def identity_change(added: Any, done: Any) -> str | None:
    """What differs between the added and the done item (``None``: nothing the helper checks)."""
    if not isinstance(added, dict) or not isinstance(done, dict):
        return None
    kept_id = added.get("id") == done.get("id") or (
        added.get("id") is None and added.get("type") in ("function_call", "custom_tool_call")
    )
    before, after = _identity(added), _identity(done)
    if before == after and kept_id:
        return None
    fields = [n for n, a, b in zip(("type", "id", "call_id"), before, after, strict=True) if a != b]
    if not kept_id and "id" not in fields:
        fields.append("id")
    return ", ".join(f"{n} {added.get(n)!r} -> {done.get(n)!r}" for n in fields)
