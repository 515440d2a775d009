"""The one-command import of docs/guides/migrating-from-vcrpy.md works as written (on a tree of
VCR.py files), and the summary and ``cassette show`` lines the page shows are the real ones."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from replayproxy._cli import cli
from tests.cassette.import_helpers import ROOT, real_events, sse_body

test_import_vcr = pytest.importorskip("tests.cassette.test_import_vcr")


def test_the_documented_command_imports_a_cassette_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guide's one-line import-vcr command converts a tree of YAML cassettes, and the
    summary and `cassette show` lines it shows are the ones printed."""
    doc = (ROOT / "docs" / "guides" / "migrating-from-vcrpy.md").read_text(encoding="utf-8")
    start = doc.index("\n## Importing your cassettes")
    section = doc[start : doc.index("\n## ", start + 1)]
    block = re.findall(r"```sh\n(.*?)```", section, re.S)[0]
    (command,) = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    yaml = tmp_path / "tests" / "cassettes" / "test_chat" / "test_stream.yaml"
    yaml.parent.mkdir(parents=True)
    test_import_vcr.vcr_yaml(yaml, sse_body(real_events()), {"content-type": ["text/event-stream"]})
    monkeypatch.chdir(tmp_path)
    args = shlex.split(command)
    assert args[:1] == ["replayproxy"]
    result = CliRunner().invoke(cli, args[1:])
    assert result.exit_code == 0, result.output
    line = result.output.strip()
    assert line == (
        "tests/cassettes/test_chat/test_stream.yaml -> tests/cassettes/test_chat/"
        "test_stream.cassette: 1 interactions, 1 streams (163 frames); "
        "lost: frame boundaries 1, timing 1, end state 1"
    )
    assert line.split(" -> ")[1].split(": ", 1)[1] in " ".join(doc.split())
    shown = CliRunner().invoke(
        cli, ["cassette", "show", "tests/cassettes/test_chat/test_stream.cassette"]
    )
    for text in shown.output.splitlines()[2:]:
        assert text in doc
