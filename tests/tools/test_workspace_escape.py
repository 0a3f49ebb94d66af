"""Escape attempts through every workspace tool, checked on disk: a sentinel directory next to the
workspace must be exactly as it was (names, bytes, mtimes, modes) after all of them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agcore.llm.types import ToolUseBlock
from agcore.tools import ToolContext, ToolRegistry
from agcore.tools.workspace import Workspace

OLD = 1_000_000_000  # a fixed past mtime: any rewrite of a sentinel file shows


def build(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "root"
    sentinel = tmp_path / "sentinel"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text("print('hi')\n")
    (root / ".env").write_text("API_KEY=inside-secret\n")
    (sentinel / "sub").mkdir(parents=True)
    (sentinel / "secret.txt").write_text("top secret\n")
    (sentinel / "sub" / "inner.txt").write_text("inner secret\n")
    for path in (sentinel / "secret.txt", sentinel / "sub" / "inner.txt", sentinel / "sub", sentinel):
        os.utime(path, (OLD, OLD))
    (root / "link_out").symlink_to(sentinel)
    (root / "link_file").symlink_to(sentinel / "secret.txt")
    (root / "dangling_out").symlink_to(sentinel / "new.txt")
    (root / "link_up").symlink_to(tmp_path)
    os.mkfifo(root / "fifo")
    return root, sentinel


def disk_state(tmp_path: Path, root: Path) -> dict[str, tuple[str, bytes, int, int]]:
    """Everything under tmp_path except the workspace's own files, plus the workspace's .env."""
    state: dict[str, tuple[str, bytes, int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(tmp_path):
        if Path(dirpath) == tmp_path:
            dirnames[:] = [d for d in dirnames if d != "root"]
        for name in [*dirnames, *filenames]:
            path = Path(dirpath, name)
            info = path.lstat()
            kind = "dir" if path.is_dir() else "file"
            content = path.read_bytes() if kind == "file" else b""
            state[str(path.relative_to(tmp_path))] = (kind, content, info.st_mtime_ns, info.st_mode)
    env = root / ".env"
    state["root/.env"] = ("file", env.read_bytes(), env.stat().st_mtime_ns, env.stat().st_mode)
    return state


def attempts(root: Path, sentinel: Path) -> list[str]:
    return [
        "../sentinel/secret.txt",
        "../sentinel/new.txt",
        "../sentinel",
        "../../etc/passwd",
        "..",
        "/",
        str(sentinel / "secret.txt"),
        str(sentinel / "new.txt"),
        str(sentinel / "sub" / "inner.txt"),
        f"{root}/../sentinel/secret.txt",
        "src/../../sentinel/secret.txt",
        "./../sentinel/sub/inner.txt",
        "a/b/../../../sentinel/secret.txt",
        "~/secret.txt",
        "~",
        "link_out/secret.txt",
        "link_out/new.txt",
        "link_out/sub/inner.txt",
        "link_file",
        "dangling_out",
        "link_up/sentinel/secret.txt",
        "link_out/../sentinel/secret.txt",
        "..\\sentinel\\secret.txt",
        "%2e%2e/sentinel/secret.txt",
        "%2e%2e%2fsentinel%2fsecret.txt",
        "\uff0e\uff0e/sentinel/secret.txt",
        "\u2024\u2024/sentinel/secret.txt",
        "..\uff0fsentinel\uff0fsecret.txt",
        "src/main.py\x00.txt",
        "",
        "   ",
        "/dev/null",
        "/dev/zero",
        "/proc/self/environ",
        "fifo",
        ".env",
        ".env.production",
    ]


COMMAND_ATTEMPTS = [
    "echo PWNED > ../sentinel/secret.txt",
    "echo PWNED >> link_out/secret.txt",
    "cat src/main.py > link_file",
    "echo PWNED > dangling_out",
    "cp src/main.py ../sentinel/",
    "cp src/main.py link_out/copied.py",
    "touch ../sentinel/new.txt",
    "rm -rf ../sentinel",
    "rm link_out/secret.txt",
    "mv ../sentinel/secret.txt .",
    "tee ../sentinel/secret.txt",
    "cd .. && echo PWNED > sentinel/secret.txt",
    "cd link_out && touch new.txt",
    "dd if=src/main.py of=../sentinel/secret.txt",
    "bash -c 'echo PWNED > ../sentinel/secret.txt'",
    "find ../sentinel -delete",
    "truncate -s 0 ../sentinel/secret.txt",
    "chmod 000 ../sentinel/secret.txt",
    "ln -s /etc/passwd ../sentinel/link",
    "mkdir ../sentinel/newdir",
]


@pytest.mark.anyio
async def test_no_escape_attempt_touches_anything_outside(tmp_path: Path) -> None:
    root, sentinel = build(tmp_path)
    registry = ToolRegistry(Workspace(root).tools())
    ctx = ToolContext(session_id="escape")
    before = disk_state(tmp_path, root)
    paths = attempts(root, sentinel)
    assert len(paths) >= 30
    assert len(COMMAND_ATTEMPTS) >= 15

    async def must_fail(name: str, arguments: dict[str, object]) -> None:
        result = await registry.execute(ToolUseBlock(id="x", name=name, input=arguments), ctx)
        assert result.is_error, f"{name}({arguments!r}) succeeded: {result.content!r}"
        assert isinstance(result.content, str)
        assert "top secret" not in result.content
        assert "inner secret" not in result.content
        assert "inside-secret" not in result.content

    for path in paths:
        await must_fail("read_file", {"path": path})
        await must_fail("write_file", {"path": path, "content": "PWNED\n"})
        if path:  # an optional directory sent empty means the workspace root (checked below)
            await must_fail("list_dir", {"path": path})
            await must_fail("grep", {"pattern": "secret", "path": path})
            await must_fail("run_command", {"command": "ls", "cwd": path})
        await must_fail("apply_patch", {"patch": f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+PWNED\n"})
        await must_fail(
            "apply_patch", {"patch": f"--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-top secret\n+PWNED\n"}
        )
        await must_fail(
            "apply_patch", {"patch": f"--- a/{path}\n+++ /dev/null\n@@ -1 +0,0 @@\n-top secret\n"}
        )
    for name, arguments in (("list_dir", {"path": ""}), ("grep", {"pattern": "secret", "path": ""}),
                            ("run_command", {"command": "cat link_file", "cwd": ""})):
        result = await registry.execute(ToolUseBlock(id="e", name=name, input=arguments), ctx)
        assert "top secret" not in str(result.content), (name, result.content)
    for command in COMMAND_ATTEMPTS:
        await must_fail("run_command", {"command": command})
    for pattern in ("../*", "../sentinel/*", "/etc/*", "link_out/*", "link_up/**"):
        result = await registry.execute(ToolUseBlock(id="g", name="glob", input={"pattern": pattern}), ctx)
        assert isinstance(result.content, str)
        assert "secret.txt" not in result.content

    after = disk_state(tmp_path, root)
    assert after == before
    assert not (sentinel / "new.txt").exists()
    assert sorted(os.listdir(tmp_path)) == ["root", "sentinel"]


@pytest.mark.anyio
async def test_searching_the_whole_workspace_never_reads_outside(tmp_path: Path) -> None:
    root, _ = build(tmp_path)
    ws = Workspace(root)
    for backend in ("python", "auto"):
        ws.grep_backend = backend
        out = await ws.grep("secret")
        assert out == "No matches for 'secret' in '.'."  # not via symlinks, not in .env
    listing = ws.list_dir(".", depth=5)
    # symlinks are shown as links (with their target), never followed
    assert "inner.txt" not in listing
    assert "sub/" not in listing
    assert "link_out -> " in listing
    assert "(outside the workspace)" in listing
