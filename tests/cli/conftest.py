"""Helpers for driving the ``agcore`` command line: a clean environment, script files, a pty child."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest
from typer.testing import CliRunner, Result

# Variables that would let the CLI reach a real model or change what it prints.
_SCRUBBED = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "AGCORE_MODEL",
             "OLLAMA_HOST", "FORCE_COLOR", "COLUMNS", "LINES")


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    """The child's environment: no API keys, plain matchable output, sessions kept under tmp_path."""
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    env.update(TERM="dumb", NO_COLOR="1", COLUMNS="200", LINES="50", AGCORE_HOME=str(tmp_path / "home"),
               PYTHONUNBUFFERED="1")
    return env


SpawnCli = Callable[..., pexpect.spawn]


@pytest.fixture
def spawn_cli(tmp_path: Path, cli_env: dict[str, str]) -> Iterator[SpawnCli]:
    """Start ``python -m agcore.cli ARGS`` in a pseudo-terminal in tmp_path (killed at teardown)."""
    children: list[pexpect.spawn] = []

    def spawn(*args: str, cwd: Path | None = None, timeout: float = 15) -> pexpect.spawn:
        child = pexpect.spawn(sys.executable, ["-m", "agcore.cli", *args], cwd=str(cwd or tmp_path),
                              env=cli_env, encoding="utf-8", timeout=timeout, dimensions=(50, 200))
        children.append(child)
        return child

    yield spawn
    for child in children:
        if child.isalive():
            child.terminate(force=True)



Invoke = Callable[..., Result]


@pytest.fixture
def invoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    """Run the CLI in this process (typer's CliRunner) in tmp_path, with the child's clean environment;
    for the commands a pseudo-terminal adds nothing to."""
    for name in _SCRUBBED:
        monkeypatch.delenv(name, raising=False)
    for name, value in {"TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "200", "LINES": "50",
                        "AGCORE_HOME": str(tmp_path / "home")}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    from agcore.cli._app import app

    def run(*args: str, input: str | None = None) -> Result:
        return CliRunner().invoke(app, list(args), input=input)

    return run
