"""Numbers in user input are ASCII digits only. ``str.isdigit()`` is also true for "¹" (which
``int()`` refuses: a traceback instead of an error) and for "٣" (which ``int()`` reads as 3: a
different field than the one named). Hypothesis found the first in JSON pointer ordering."""

from __future__ import annotations

import pytest

from replayproxy._cli import _common
from replayproxy._cli.cassette_edit import _insert, _merge_range
from replayproxy._core.json.pointer import pointer_order
from replayproxy._core.redaction.body_fields import redact_json
from replayproxy._core.tools.edit import _rechunk_size
from replayproxy._errors import UsageError

NOT_ASCII = ["¹", "٣", "\uff11"]  # superscript one, Arabic-Indic three, fullwidth one


@pytest.mark.parametrize("digit", NOT_ASCII)
def test_pointer_order_takes_a_non_ascii_digit_as_a_name(digit: str) -> None:
    """An object key "¹" sorts among the names, after every index; no ValueError."""
    assert pointer_order(("2", digit)) == ((0, 2, ""), (1, 0, digit))


@pytest.mark.parametrize("digit", NOT_ASCII)
def test_a_non_ascii_digit_is_no_array_index(digit: str) -> None:
    """Redacting /items/٣ in a list redacts nothing (it names no element), never element 3."""
    doc = {"items": ["a", "b", "c", "d"]}
    assert redact_json(doc, ("items", digit)) == (doc, False)


@pytest.mark.parametrize("digit", NOT_ASCII)
def test_cli_numbers_refuse_non_ascii_digits_with_the_usage_error(digit: str) -> None:
    """--merge, --insert-event, --rechunk and --listen: a one-line usage error, no traceback."""
    with pytest.raises(UsageError, match="bad --merge"):
        _merge_range(f"{digit}-2")
    with pytest.raises(UsageError, match="bad --insert-event"):
        _insert(f"{digit}=data: x")
    with pytest.raises(UsageError, match="bad --rechunk"):
        _rechunk_size(f"bytes={digit}")
    with pytest.raises(UsageError, match="the port must be 0-65535"):
        _common.parse_listen(f"127.0.0.1:{digit}")
