"""One list of secrets: ``read_file`` (the ``PathGuard``) and ``cat`` (``run_command`` through the
``CommandGuard``) refuse exactly the same files, every entry of ``agcore.tools._secrets`` included,
with the workspace at a home directory and elsewhere; public keys and ``.env`` templates pass both."""

from __future__ import annotations

from pathlib import Path

import pytest

from agcore.tools import ToolDenied, ToolError
from agcore.tools._path_guard import DEFAULT_DENY
from agcore.tools._secrets import (
    NOT_SECRET_NAME_PATTERNS,
    SECRET_HOME_PATHS,
    SECRET_NAME_PATTERNS,
    is_secret_path,
    path_deny_patterns,
)
from agcore.tools.workspace import Workspace


def _example(pattern: str) -> str:
    """A concrete file name a name pattern matches: ``*.pem`` -> ``x.pem``, ``id_rsa*`` -> ``id_rsa``."""
    if pattern.startswith("*"):
        return "x" + pattern[1:]
    return pattern.replace(".*", ".local").replace("*", "")


SECRET_NAMES = sorted({_example(p) for p in SECRET_NAME_PATTERNS})
NOT_SECRET = ["id_rsa.pub", "keys/id_ed25519.pub", ".env.example", "config/.env.local.sample", "notes.txt"]


def _plant(root: Path, relative: str, kind: str = "file") -> str:
    """Create ``relative`` under ``root`` as a file, or as a directory with a file in it; returns the
    path a tool is asked for."""
    path = root / relative
    if kind == "dir":
        path.mkdir(parents=True, exist_ok=True)
        path = path / "config"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("FAKE-SECRET\n")
    return str(path.relative_to(root))


async def _verdicts(ws: Workspace, relative: str) -> tuple[bool, bool]:
    """(read_file refused, cat refused) for one path."""
    try:
        ws.read_file(relative)
        read_refused = False
    except ToolDenied:
        read_refused = True
    try:
        out = await ws.run_command(f"cat {relative}")
        cat_refused = False
        assert "exit code: 0" in out, out
    except ToolDenied:
        cat_refused = True
    except ToolError as exc:  # anything else is a harness bug, not a verdict
        raise AssertionError(exc.message) from exc
    return read_refused, cat_refused


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "home"
    root.mkdir()
    monkeypatch.setenv("HOME", str(root))
    return root


def test_the_path_guard_list_is_derived_from_the_secrets_list() -> None:
    assert path_deny_patterns() == DEFAULT_DENY
    for pattern in SECRET_NAME_PATTERNS:
        assert pattern in DEFAULT_DENY
    for relative in SECRET_HOME_PATHS:
        assert relative in DEFAULT_DENY or f"**/{relative}" in DEFAULT_DENY


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["file", "dir"])
@pytest.mark.parametrize("relative", [*SECRET_HOME_PATHS, *SECRET_NAMES])
async def test_workspace_at_home_read_file_and_cat_both_refuse(home: Path, relative: str, kind: str) -> None:
    asked = _plant(home, relative, kind)
    ws = Workspace(home, sandbox="off", confirm_commands=False)
    assert await _verdicts(ws, asked) == (True, True), asked
    assert is_secret_path(home / asked)


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["file", "dir"])
@pytest.mark.parametrize("relative", [*SECRET_HOME_PATHS, *SECRET_NAMES])
async def test_a_project_workspace_refuses_the_same_entries_below_it(
    home: Path, tmp_path: Path, relative: str, kind: str
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    asked = _plant(root / "sub", relative, kind)
    ws = Workspace(root, sandbox="off", confirm_commands=False)
    assert await _verdicts(ws, f"sub/{asked}") == (True, True), asked


@pytest.mark.anyio
@pytest.mark.parametrize("relative", NOT_SECRET)
async def test_public_keys_and_templates_pass_both(home: Path, tmp_path: Path, relative: str) -> None:
    root = tmp_path / "project"
    root.mkdir()
    _plant(root, relative)
    ws = Workspace(root, sandbox="off", confirm_commands=False)
    assert await _verdicts(ws, relative) == (False, False)


def test_every_exception_is_narrower_than_a_secret_pattern() -> None:
    """An exception that matched nothing secret would be dead weight; one that matched everything
    would open the list: each lifts the denial of at least one example, and no plain secret."""
    assert NOT_SECRET_NAME_PATTERNS
    for name in SECRET_NAMES:
        assert is_secret_path(Path("/w") / name), name
    assert not is_secret_path(Path("/w/id_rsa.pub"))
    assert is_secret_path(Path("/w/.ssh/id_rsa.pub"))  # inside .ssh it is still the key store
