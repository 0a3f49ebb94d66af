"""A newcomer's first minutes, run for real: the README's first commands on a fresh clone put
``agcore`` and the ``temporal`` dev server on PATH, and the development environment loads no test or
example plugin into a user's ``agcore`` runs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENV = Path(sys.prefix)
# Files whose age decides whether make reinstalls (the Makefile's $(STAMP) prerequisites).
_STAMP_INPUTS = ("Makefile", "pyproject.toml", "tests/downstream_pkg/pyproject.toml",
                 "examples/agcore_example_pkg/pyproject.toml")


def _first_commands(readme: str) -> list[str]:
    """The README's shell lines, in order, up to and including ``agcore --help``."""
    lines: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", readme, flags=re.DOTALL):
        for line in block.splitlines():
            command = line.split("#", 1)[0].strip()
            if command:
                lines.append(command)
            if command == "agcore --help":
                return lines
    raise AssertionError("the README never says `agcore --help`")


def _without_the_venv(env: dict[str, str]) -> dict[str, str]:
    """A shell as a newcomer's: no activated environment, nothing of ours on PATH or PYTHONPATH."""
    clean = {k: v for k, v in env.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    path = [entry for entry in clean.get("PATH", "").split(os.pathsep)
            if entry and not (Path(entry) / "agcore").exists() and not (Path(entry) / "temporal").exists()]
    clean["PATH"] = os.pathsep.join(path)
    return clean


needs_a_venv_and_a_checkout = pytest.mark.skipif(
    sys.prefix == sys.base_prefix or not (ROOT / ".git").exists() or not shutil.which("git")
    or not shutil.which("make"),
    reason="runs from a git checkout whose tests run in a virtual environment, with git and make",
)


@needs_a_venv_and_a_checkout
def test_the_readmes_first_lines_on_a_fresh_clone_put_agcore_and_temporal_on_path(tmp_path: Path) -> None:
    clone = tmp_path / "agcore"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    # A fresh install takes a minute: the clone borrows this run's environment, already installed
    # from the same files, and make is told it is up to date (the clone's files are older than it).
    (clone / ".venv").symlink_to(VENV, target_is_directory=True)
    for name in _STAMP_INPUTS:
        os.utime(clone / name, (0, 0))
    commands = _first_commands((clone / "README.md").read_text(encoding="utf-8"))
    assert commands[:2] == ["make demo", "make test"]
    assert ". .venv/bin/activate" in commands
    # `make test` runs this very test (and the whole suite): every other line runs as written.
    script = "\n".join(["set -e", *(c for c in commands if c != "make test"),
                        "command -v agcore", "command -v temporal", "temporal server start-dev --help"])
    env = _without_the_venv(dict(os.environ))
    assert subprocess.run(["bash", "-c", "command -v agcore"], env=env, cwd=clone,
                          capture_output=True).returncode != 0, "agcore is on PATH before activation"

    done = subprocess.run(["bash", "-c", script], env=env, cwd=clone, capture_output=True, text=True,
                          timeout=300)

    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Usage: agcore" in done.stdout  # agcore --help
    assert "Run a development Temporal Server" in done.stdout
    on_path = [line for line in done.stdout.splitlines() if line.endswith(("/agcore", "/temporal"))]
    assert [Path(line).name for line in on_path] == ["agcore", "temporal"]
    # The activate script names the environment by its real path (the one the clone's .venv links to).
    assert all(Path(line).parent.parent.resolve() == (clone / ".venv").resolve() for line in on_path)


@needs_a_venv_and_a_checkout
def test_the_dev_environment_loads_no_test_or_example_plugin_into_agcore_runs() -> None:
    env = _without_the_venv(dict(os.environ))
    done = subprocess.run([str(VENV / "bin" / "agcore"), "plugins"], env={**env, "COLUMNS": "200"},
                          capture_output=True, text=True, check=True)
    assert "review_guard" not in done.stdout
    assert "example_protected_paths" not in done.stdout


def test_the_tests_still_see_the_downstream_and_example_packages() -> None:
    from importlib.metadata import entry_points

    pytest.importorskip("agcore_downstream_example", reason="run `make .venv/.installed-stamp` first")
    names = {ep.name for ep in entry_points(group="agcore")}
    assert {"review_guard", "example_protected_paths"} <= names
