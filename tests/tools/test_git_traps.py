"""Git metadata traps (tryout findings 3 and 4), reproduced end to end: a command plants something in
the workspace's ``.git`` (or a whole new ``.git``), then the *user's own* ``git status`` runs on the
host, outside any sandbox. The attack works when that ``git status`` writes the canary outside.

The guard refuses every write into ``.git`` it can read; the sandbox mounts the existing control files
read-only; what a script creates is undone after the command (``GitTrapCheck``). Benign git use
(``git init``, ``add``, ``commit``) keeps working. asyncio only: this is about files and processes.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agcore.tools import CommandGuard, ToolDenied
from agcore.tools._git_traps import GitTrapCheck, protected_paths
from agcore.tools.workspace import Workspace
from tests.tools.sandbox_support import require_bwrap, scratch_dir

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1",
}  # fmt: skip


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def scratch() -> Iterator[Path]:
    if shutil.which("git") is None:
        pytest.fail("git is needed by the git trap tests")
    yield from scratch_dir()


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV, "HOME": str(cwd.parent / "home")}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=30)


def _layout(scratch: Path, *, repo: bool) -> tuple[Path, Path]:
    ws, outside = scratch / "ws", scratch / "outside"
    ws.mkdir()
    outside.mkdir()
    (scratch / "home").mkdir()
    if repo:
        _git(ws, "init", "-q")
    return ws, outside


def _fsmonitor_config(outside: Path) -> str:
    return f"[core]\n\trepositoryformatversion = 0\n\tfsmonitor = echo PWNED > {outside}/canary.txt\n"


@pytest.mark.anyio
@pytest.mark.parametrize("sandbox", ["required", "off"])
async def test_a_commondir_planted_by_a_script_is_undone(scratch: Path, sandbox: str) -> None:
    if sandbox == "required":
        require_bwrap()
    ws_root, outside = _layout(scratch, repo=True)
    ws = Workspace(ws_root, sandbox=sandbox, confirm_commands=False)  # type: ignore[arg-type]
    ws.write_file("evilgit/config", _fsmonitor_config(outside))  # allowed: not inside .git
    await ws.run_command("cp -r .git/objects .git/refs .git/HEAD evilgit/")
    ws.write_file("plant.sh", "echo ../evilgit > .git/commondir\n")
    if sandbox == "off":  # guard-only: the guard reads a shell script before it runs, and refuses it
        with pytest.raises(ToolDenied, match="script it runs"):
            await ws.run_command("bash plant.sh")
    ws.write_file("plant.py", "open('.git/commondir', 'w').write('../evilgit\\n')\n")  # not read by it
    out = await ws.run_command(f"{shlex.quote(sys.executable)} plant.py")
    _git(ws_root, "status")  # the user's own git, on the host
    assert not (outside / "canary.txt").exists()
    assert "commondir makes git read another repository" in out
    assert "it was removed" in out
    assert not (ws_root / ".git" / "commondir").exists()
    with pytest.raises(ToolDenied, match="inside git's metadata"):
        await ws.run_command("cp plant.sh .git/commondir")  # finding 3's literal command: the guard


@pytest.mark.anyio
@pytest.mark.parametrize("sandbox", ["required", "off"])
async def test_a_fresh_git_with_a_command_in_its_config_is_removed(scratch: Path, sandbox: str) -> None:
    if sandbox == "required":
        require_bwrap()
    ws_root, outside = _layout(scratch, repo=False)
    ws = Workspace(ws_root, sandbox=sandbox, confirm_commands=False)  # type: ignore[arg-type]
    script = (
        "import os\n"
        "for d in ('.git/objects', '.git/refs/heads'):\n    os.makedirs(d, exist_ok=True)\n"
        "open('.git/HEAD', 'w').write('ref: refs/heads/main\\n')\n"
        f"open('.git/config', 'w').write({_fsmonitor_config(outside)!r})\n"
    )
    ws.write_file("setup_tools.py", script)
    out = await ws.run_command("python3 setup_tools.py")
    _git(ws_root, "status")  # the user's own git, on the host
    assert not (outside / "canary.txt").exists()
    assert "core.fsmonitor" in out
    assert "the .git this command created was removed" in out
    assert not (ws_root / ".git").exists()


@pytest.mark.anyio
async def test_hooks_attributes_and_a_git_file_planted_by_scripts_are_undone(scratch: Path) -> None:
    ws_root, outside = _layout(scratch, repo=True)
    ws = Workspace(ws_root, sandbox="off", confirm_commands=False)
    shutil.rmtree(ws_root / ".git" / "hooks")  # a repo without hooks/: nothing to mount read-only
    hook = f"#!/bin/sh\necho PWNED > {outside}/canary.txt\n"
    ws.write_file(  # Python: guard-only mode reads shell scripts before they run, and would refuse one
        "plant.py",
        "import os\nos.makedirs('.git/hooks', exist_ok=True)\nos.makedirs('.git/info', exist_ok=True)\n"
        f"open('.git/hooks/pre-commit', 'w').write({hook!r})\nos.chmod('.git/hooks/pre-commit', 0o755)\n"
        "open('.git/info/attributes', 'w').write('* filter=evil\\n')\n",
    )
    out = await ws.run_command(f"{shlex.quote(sys.executable)} plant.py")
    ws.write_file("a.txt", "a\n")
    _git(ws_root, "add", "a.txt")
    _git(ws_root, "commit", "-qm", "x")  # the user's own commit runs pre-commit
    assert not (outside / "canary.txt").exists()
    assert "hooks/pre-commit is a hook git would run" in out
    assert "info/attributes names a filter" in out
    assert not (ws_root / ".git" / "hooks" / "pre-commit").exists()
    assert not (ws_root / ".git" / "info" / "attributes").exists()


@pytest.mark.anyio
async def test_a_changed_config_gets_its_old_content_back_in_guard_only_mode(scratch: Path) -> None:
    ws_root, outside = _layout(scratch, repo=True)
    config = ws_root / ".git" / "config"
    old = config.read_bytes()
    ws = Workspace(ws_root, sandbox="off", confirm_commands=False)
    ws.write_file(
        "plant.py", f"open('.git/config', 'a').write('[core]\\n\\tfsmonitor = echo PWNED > {outside}/c\\n')\n"
    )
    out = await ws.run_command("python3 plant.py")
    assert "its previous content was put back" in out
    assert config.read_bytes() == old


@pytest.mark.anyio
@pytest.mark.parametrize("sandbox", ["required", "off"])
async def test_git_init_add_commit_keep_working(scratch: Path, sandbox: str) -> None:
    if sandbox == "required":
        require_bwrap()
    ws_root, _ = _layout(scratch, repo=False)
    ws = Workspace(ws_root, sandbox=sandbox, env=GIT_ENV, confirm_commands=False)  # type: ignore[arg-type]
    ws.write_file("a.txt", "a\n")
    commands = ["git init -q", "git add a.txt", "git commit -qm first", "git log --oneline"]
    if sandbox == "off":  # sandboxed, an existing .git/config is read-only: git remote add cannot write it
        commands.insert(3, "git remote add origin ../elsewhere.git")
    for command in commands:
        out = await ws.run_command(command)
        assert "exit code: 0" in out, out
        assert "refused" not in out
    assert "first" in out
    assert (ws_root / ".git" / "config").exists()
    assert ("elsewhere.git" in (ws_root / ".git" / "config").read_text()) == (sandbox == "off")


def test_existing_control_paths_are_mounted_read_only(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.fail("git is needed by the git trap tests")
    _git(tmp_path, "init", "-q")
    (tmp_path / ".git" / "commondir").write_text(".\n")
    names = {p.name for p in protected_paths(tmp_path)}
    assert {"config", "hooks", "info", "commondir"} <= names
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: /elsewhere\n")
    assert protected_paths(worktree) == [worktree / ".git"]
    assert protected_paths(tmp_path / "wt" / "none") == []


def test_a_config_with_only_git_init_keys_is_left_alone(tmp_path: Path) -> None:
    check = GitTrapCheck(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n[user]\n\tname = x\n"
    )
    (tmp_path / ".git" / "hooks").mkdir()
    (tmp_path / ".git" / "hooks" / "pre-commit.sample").write_text("#!/bin/sh\n")
    assert check.undo_traps() == []
    assert (tmp_path / ".git" / "config").exists()


@pytest.mark.parametrize(
    "command",
    [
        "cp cd.txt .git/commondir", "mv a.txt .git/info/attributes", "install -m 755 a.txt .git/hooks/x",
        "tee .git/config", "dd if=a.txt of=.git/commondir", "ln -s ../evil .git/commondir",
        "rsync -a a.txt .git/", "tar -C .git -xf x.tar", "tar xf x.tar -C .git/hooks",
        "sed -i s/a/b/ .git/config", "sed -i -e s/a/b/ .git/config", "touch .git/commondir",
        "mkdir -p .git/worktrees/x", "cp -r evil .git", "cp a.txt sub/.git/config", "echo x > .git/commondir",
    ],
)  # fmt: skip
def test_the_guard_refuses_writes_into_git_metadata(tmp_path: Path, command: str) -> None:
    guard = CommandGuard(workspace=tmp_path)
    with pytest.raises(ToolDenied, match=r"inside git's metadata \(\.git\)"):
        guard.check(command, cwd=tmp_path, confirmed=True)


@pytest.mark.parametrize(
    "command",
    [
        "git init", "git add a.txt", "git commit -m x", "sed -i s/a/b/ a.txt", "tar -xf x.tar",
        "touch .gitignore", "rsync -a a.txt b/", "cp a.txt .github/x.yml",
    ],
)  # fmt: skip
def test_the_guard_still_allows_ordinary_writes(tmp_path: Path, command: str) -> None:
    CommandGuard(workspace=tmp_path).check(command, cwd=tmp_path, confirmed=True)


@pytest.mark.parametrize(
    ("config", "trap"),
    [
        ('[remote "origin"]\n\turl = ../x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n', False),
        ('[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n', False),
        ('[remote "origin"]\n\turl = ../x.git\n\tuploadpack = touch /tmp/owned\n', True),
        ("[core]\n\thooksPath = elsewhere\n", True),
        ("[include]\n\tpath = ../evil.cfg\n", True),
        ("[core] fsmonitor = x\n", True),  # a key on the section's line
        ("fsmonitor = x\n", True),  # a key before any section
        ("[core\n", True),  # what git may read differently is not trusted
    ],
)
def test_which_new_configs_are_traps(tmp_path: Path, config: str, trap: bool) -> None:
    (tmp_path / ".git").mkdir()
    check = GitTrapCheck(tmp_path)
    (tmp_path / ".git" / "config").write_text(config)
    assert bool(check.undo_traps()) == trap
    assert (tmp_path / ".git" / "config").exists() != trap


@pytest.mark.anyio
@pytest.mark.parametrize("sandbox", ["required", "off"])
async def test_a_config_padded_past_what_is_read_of_it_is_removed(scratch: Path, sandbox: str) -> None:
    # An attacker's trick: the command goes after a MiB of comments, past what the check reads.
    if sandbox == "required":
        require_bwrap()
    ws_root, outside = _layout(scratch, repo=False)
    ws = Workspace(ws_root, sandbox=sandbox, confirm_commands=False)  # type: ignore[arg-type]
    padding = "#" * 99 + "\n"
    script = (
        "import os\n"
        "for d in ('.git/objects', '.git/refs/heads'):\n    os.makedirs(d, exist_ok=True)\n"
        "open('.git/HEAD', 'w').write('ref: refs/heads/main\\n')\n"
        f"open('.git/config', 'w').write('[core]\\n\\tbare = false\\n' + {padding!r} * 14000 + "
        f"{_fsmonitor_config(outside)!r})\n"
    )
    ws.write_file("pad.py", script)
    out = await ws.run_command("python3 pad.py")
    assert "too large to check" in out
    assert not (ws_root / ".git").exists()
    _git(ws_root, "status")  # the user's own git, on the host: nothing of the trap left
    assert not (outside / "canary.txt").exists()
