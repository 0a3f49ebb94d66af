"""Tests of the ``agcore`` command line; helpers shared by its test files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pexpect


def write_script(directory: Path, replies: list[Any], name: str = "model.json") -> Path:
    """A scripted model file (see ``agcore.testing.load_script``) for ``--model scripted:PATH``."""
    path = directory / name
    path.write_text(json.dumps(replies), encoding="utf-8")
    return path


def finish(child: pexpect.spawn) -> int:
    """Wait for the child to exit; its exit status."""
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus is not None, f"killed by signal {child.signalstatus}"
    return int(child.exitstatus)
