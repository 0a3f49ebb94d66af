"""``agcore run`` says which command layer is active: the bubblewrap sandbox or guard-only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import write_script
from tests.cli.conftest import Invoke
from tests.tools.sandbox_support import require_bwrap

DONE = [{"text": "Nothing to do."}]


def test_guard_only_is_said_out_loud(tmp_path: Path, invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGCORE_SANDBOX", "off")
    write_script(tmp_path, DONE)
    done = invoke("run", "look around", "--model", "scripted:model.json", "--yes", "--no-plugins")
    assert done.exit_code == 0, done.stderr
    assert "commands: guard-only (sandbox off)" in done.stdout


def test_the_sandbox_is_named_when_active(
    tmp_path: Path, invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    monkeypatch.setenv("AGCORE_SANDBOX", "required")
    write_script(tmp_path, DONE)
    done = invoke("run", "look around", "--model", "scripted:model.json", "--yes", "--no-plugins")
    assert done.exit_code == 0, done.stderr
    assert "commands: bubblewrap sandbox (" in done.stdout


def test_a_bad_mode_is_a_usage_error(tmp_path: Path, invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGCORE_SANDBOX", "sometimes")
    write_script(tmp_path, DONE)
    done = invoke("run", "look around", "--model", "scripted:model.json", "--yes", "--no-plugins")
    assert done.exit_code == 2
    assert "AGCORE_SANDBOX='sometimes': choose one of auto, required, off" in done.output
