"""The repository carries the license pyproject.toml declares, and a NOTICE for shipped payloads."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_license_is_the_apache_2_text_pyproject_declares() -> None:
    """LICENSE is the full Apache License 2.0 (with its appendix), as pyproject.toml says."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"]
    assert declared == "Apache-2.0"
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "APPENDIX: How to apply the Apache License to your work." in text


def test_notice_names_every_shipped_third_party_payload_source() -> None:
    """NOTICE credits the Vercel AI SDK fixtures and points at the license shipped with them."""
    notice = (ROOT / "NOTICE").read_text()
    payloads = ROOT / "replayproxy" / "testing" / "payloads"
    licence = next(payloads.glob("LICENSE-*"))
    assert f"replayproxy/testing/payloads/{licence.name}" in notice
    assert "Copyright 2023 Vercel, Inc." in notice and "cassettes/" in notice
    assert list(payloads.glob("*.jsonl")), "no payloads shipped?"
