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
    assert "off: reads are not confined" in done.stdout  # which protections are off, said at start
    assert "off: no network isolation" in done.stdout


def test_the_sandbox_is_named_when_active(
    tmp_path: Path, invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    monkeypatch.setenv("AGCORE_SANDBOX", "required")
    write_script(tmp_path, DONE)
    done = invoke("run", "look around", "--model", "scripted:model.json", "--yes", "--no-plugins")
    assert done.exit_code == 0, done.stderr
    assert "commands: bubblewrap sandbox (" in done.stdout
    assert "off:" not in done.stdout


def test_a_bad_mode_is_a_usage_error(tmp_path: Path, invoke: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGCORE_SANDBOX", "sometimes")
    write_script(tmp_path, DONE)
    done = invoke("run", "look around", "--model", "scripted:model.json", "--yes", "--no-plugins")
    assert done.exit_code == 2
    assert "AGCORE_SANDBOX='sometimes': choose one of auto, required, off" in done.output


def test_env_passes_a_named_variable_to_commands(
    tmp_path: Path, invoke: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Commands see only allow-listed variables; ``--env NAME`` adds one (the others stay out)."""
    monkeypatch.setenv("AGCORE_SANDBOX", "off")
    monkeypatch.delenv("AGCORE_ENV_ALLOW", raising=False)  # and restored after: --env sets it
    monkeypatch.setenv("MY_SETTING", "FAKE-SETTING-VALUE")
    monkeypatch.setenv("OTHER_SETTING", "FAKE-OTHER-VALUE")
    probe = {"name": "run_command", "arguments": {"command": "env > env.txt"}}
    write_script(tmp_path, [{"tool_calls": [probe]}, *DONE])
    done = invoke("run", "show env", "--model", "scripted:model.json", "--yes", "--no-plugins",
                  "--env", "MY_SETTING")
    assert done.exit_code == 0, done.stderr
    seen = (tmp_path / "env.txt").read_text()
    assert "MY_SETTING=FAKE-SETTING-VALUE" in seen
    assert "FAKE-OTHER-VALUE" not in seen
