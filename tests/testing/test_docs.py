"""The example of docs/guides/pytest.md's "Testing helpers" section runs and passes as written."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "guides" / "pytest.md"


def test_the_testing_helpers_example_passes(tmp_path: Path) -> None:
    """The section's code block, with the imports its note lists, is a passing test."""
    section = DOC.read_text(encoding="utf-8").split("## Testing helpers: `replayproxy.testing`")[1]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    imports = re.search(r"\(Imports: (.*?)\.\)", section, re.S)
    assert imports is not None
    lines = [i.strip(" `\n") for i in imports.group(1).split(";")]
    lines = [f"import {i}" if " " not in i else i for i in lines]
    namespace: dict[str, object] = {}
    exec("\n".join(lines) + "\n" + code, namespace)
    namespace["test_replay_stays_offline"](tmp_path)  # type: ignore[operator]
