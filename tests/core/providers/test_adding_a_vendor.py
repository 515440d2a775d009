"""docs/architecture.md's "A provider vendor", proved: in a copy of the package, a vendor added
by the listed steps alone is told, named and redacted, and the registry tests pass; leaving a
step out, or listing the vendor's host anywhere else, makes them fail."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.providers import vendor_docs

ROOT = vendor_docs.ROOT
# The registry tests and what they import (no conftest: they need no fixture).
TEST_FILES = (
    "tests/__init__.py",
    "tests/core/__init__.py",
    "tests/core/providers/__init__.py",
    "tests/core/providers/source_scan.py",
    "tests/core/providers/vendor_docs.py",
    "tests/core/providers/test_vendors.py",
)
VENDORS_PY = "replayproxy/_core/providers/vendors.py"
# Step 1: one definition, with a host, a route, a marker, a model prefix and a credential.
VENDOR = """    VendorDef(
        "Acme AI",
        hosts=("api.acme-ai.test",),
        routes=("acme-ai",),
        models=("acme-",),
        markers=(Marker(Provider.OPENAI_CHAT, "/x_acme"),),
        secret_headers=("x-acme-key",),
    ),
"""
# What the new vendor must do once added: the dialect a check names, from its host and from its
# payload marker, and the default redaction of its credential.
PROBE = """
import replayproxy
from replayproxy.checking import check_stream
from replayproxy._core.cassette.model import Request
from replayproxy._core.redaction.secrets import Redactor

assert replayproxy.__file__.startswith({root!r}), replayproxy.__file__
body = b'data: {{"choices":[{{"index":0,"delta":{{"content":"hi"}},"finish_reason":"stop"}}]' \\
    b',"x_acme":{{}}}}\\n\\ndata: [DONE]\\n\\n'
by_url = check_stream(body, url="https://api.acme-ai.test/v1/chat/completions").dialect
by_marker = check_stream(body, provider="openai").dialect
sent = Request("POST", "https://api.acme-ai.test/v1", headers=((b"x-acme-key", b"sk-1"),))
kept = Redactor().request(sent).headers
print(by_url, "|", by_marker, "|", kept[0][1].decode())
"""


def _copy(tmp_path: Path) -> Path:
    """The package, the registry tests and the vendors page, in a directory of their own."""
    root = tmp_path / "copy"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "replayproxy", root / "replayproxy", ignore=skip)
    page = vendor_docs.docs_page().relative_to(ROOT)
    for rel in (*TEST_FILES, page):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, root / rel)
    return root


def _add_vendor(root: Path) -> None:
    """Step 1: the definition, last in VENDORS."""
    path = root / VENDORS_PY
    text = path.read_text(encoding="utf-8")
    head, tail = text.rsplit("\n)\n", 1)
    path.write_text(f"{head}\n{VENDOR})\n{tail}", encoding="utf-8")


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=120
    )


def _registry_tests(root: Path) -> subprocess.CompletedProcess[str]:
    # without replayproxy's own pytest plugin: the registry tests need none of it
    args = ("-p", "no:cacheprovider", "-p", "no:replayproxy")
    return _run(root, "-m", "pytest", "-q", *args, "tests/core/providers/test_vendors.py")


def test_a_vendor_added_by_the_listed_steps_works(tmp_path: Path) -> None:
    """The definition plus the regenerated docs row: the registry tests pass, a check names the
    vendor from its host and from its marker, and its credential header is redacted."""
    root = _copy(tmp_path)
    _add_vendor(root)
    assert _run(root, "-m", "tests.core.providers.vendor_docs").returncode == 0  # step 2
    result = _registry_tests(root)
    assert result.returncode == 0, result.stdout[-3000:]
    probe = _run(root, "-c", PROBE.format(root=str(root)))
    assert probe.returncode == 0, probe.stderr[-3000:]
    assert probe.stdout.split(" | ") == [
        "OpenAI-compatible (Acme AI)",
        "OpenAI-compatible (Acme AI)",
        "<redacted>\n",
    ]


def test_a_vendor_without_its_docs_row_fails(tmp_path: Path) -> None:
    """Step 2 left out: the docs table no longer matches the registry, and the test says how
    to regenerate it."""
    root = _copy(tmp_path)
    _add_vendor(root)
    result = _registry_tests(root)
    assert result.returncode == 1
    assert "FAILED tests/core/providers/test_vendors.py::test_the_docs_table_is_the_registry" in (
        result.stdout
    )
    assert result.stdout.count("FAILED") == 1


@pytest.mark.parametrize(
    ("where", "edit", "failing"),
    [
        # a host table of its own beside the registry (the side door this replaced)
        ("replayproxy/_core/check/dialect.py", '\n_HOSTS = {"api.acme-ai.test": "Acme AI"}\n',
         "test_no_module_keeps_vendor_hosts_of_its_own"),
        # a definition reusing another vendor's host: one of them could never be told
        (VENDORS_PY, "", "test_names_and_rules_are_unique"),
    ],
)  # fmt: skip
def test_a_vendor_added_elsewhere_fails(
    tmp_path: Path, where: str, edit: str, failing: str
) -> None:
    """A vendor host kept outside the registry, or a definition that clashes with another, is
    caught even with the docs regenerated."""
    root = _copy(tmp_path)
    _add_vendor(root)
    path = root / where
    if edit:
        path.write_text(path.read_text(encoding="utf-8") + edit, encoding="utf-8")
    else:
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace('"api.acme-ai.test"', '"api.groq.com"'), encoding="utf-8")
    assert _run(root, "-m", "tests.core.providers.vendor_docs").returncode == 0
    result = _registry_tests(root)
    assert result.returncode == 1
    assert f"::{failing}" in result.stdout, result.stdout[-3000:]
