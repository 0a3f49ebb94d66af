"""Guard-only mode's gaps from issue 24, closed in the guard: programs that write without looking
like it, directories the guard could not follow, other processes' environments, interpreters on the
network, scripts and Makefiles read before they run, and processes that leave their group."""

from __future__ import annotations

import random
import time
from pathlib import Path

import anyio
import pytest

from agcore.tools import CommandDenied, CommandGuard
from agcore.tools.workspace import Workspace
from tests.tools.sandbox_support import processes_with


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    (tmp_path / "out").mkdir()
    return root


@pytest.mark.parametrize(
    "command",
    [
        "gzip {OUT}/canary.txt", "gzip -k {OUT}/canary.txt", "xz -d {OUT}/c.xz", "zstd a.txt -o {OUT}/a.zst",
        "split -b 1 a.txt {OUT}/part", "csplit -f {OUT}/piece a.txt 1",
        "patch {OUT}/canary.txt a.txt", "patch -d {OUT} -p1 -i a.txt", "patch -o {OUT}/x a.txt a.txt",
        "git init {OUT}/repo", "git init -q --bare {OUT}/r.git",
        "env -C {OUT} rm -f canary.txt", "env --chdir={OUT} touch x",
        "prlimit --nofile=64 rm -rf {OUT}", "prlimit -- touch {OUT}/x",
        "CDPATH={OUT} bash -c 'cd sub && rm -f inner.txt'", "bash -c 'export CDPATH={OUT}; cd sub'",
        "env CDPATH={OUT} bash -c 'cd sub'",
        "cat /proc/1/environ", "bash -c 'cat /proc/$PPID/environ'", "cat /proc/self/task/1/environ",
        "ps eww", "ps auxe", "ps e -o pid,cmd",
        "mkfifo {OUT}/fifo", "mknod {OUT}/p p", "tar -C {OUT} -cf {OUT}/x.tar a.txt",
        "tar cf {OUT}/x.tar a.txt", "tar -czf{OUT}/x.tgz a.txt", "tar --create --file={OUT}/x.tar a.txt",
        "tar -xf x.tar --to-command='rm -rf {OUT}'",
        "tar -xf x.tar --checkpoint=1 --checkpoint-action=exec='rm -rf {OUT}'",
        "tar -I 'rm -rf {OUT}' -xf x.tar",
        "bash -c 'echo ${{x:-$(touch {OUT}/p)}}'", "bash -c 'echo ${{x:=`rm -rf {OUT}`}}'",
    ],
)  # fmt: skip
def test_the_guard_refuses(ws: Path, command: str) -> None:
    with pytest.raises(CommandDenied):
        CommandGuard(workspace=ws).check(command.format(OUT=ws.parent / "out"), confirmed=True)


@pytest.mark.parametrize(
    "command",
    [
        "perl -pi -e 's/canary/PWNED/' {OUT}/canary.txt", "perl -i.bak -pe 's/a/b/' {OUT}/canary.txt",
        "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 9))'",
        "python3 -c 'import urllib.request as u; u.urlopen(\"http://x\")'",
        "node -e 'fetch(\"http://x\")'", "awk 'BEGIN {{ system(\"rm -rf {OUT}\") }}'",
        "awk 'BEGIN {{ print \"x\" | \"cat > {OUT}/c\" }}'", "awk 'BEGIN {{ print \"x\" > \"{OUT}/c\" }}'",
        "awk -v f={OUT}/c 'BEGIN {{ print \"x\" > f }}'", "awk 'BEGIN {{ system(x) }}'",
        "perl -e 'use IO::Socket; IO::Socket::INET->new(\"x:1\")'",
    ],
)  # fmt: skip
def test_even_confirmed_one_liners_are_refused(ws: Path, command: str) -> None:
    with pytest.raises(CommandDenied):
        CommandGuard(workspace=ws).check(command.format(OUT=ws.parent / "out"), confirmed=True)


@pytest.mark.parametrize(
    "command",
    [
        "gzip -c a.txt > a.gz", "gzip a.txt", "gunzip -t a.gz", "split -l 1 a.txt part-",
        "patch -p1 -i a.txt", "git init", "git init sub", "env -C . ls", "prlimit --nofile=64 ls",
        "ps aux", "ps -ef", "tar -cf x.tar a.txt", "tar czf x.tgz a.txt", "tar -xf x.tar", "tar tf x.tar",
        "tar -I zstd -cf x.tar.zst a.txt", "mkfifo pipe",
        "perl -pi -e 's/a/b/' a.txt", "python3 -c 'print(1)'", "cat /proc/self/status",
        "awk '{print $1}' a.txt", "awk '{print $1 > \"out.txt\"}' a.txt", "awk 'BEGIN { system(\"ls\") }'",
    ],
)  # fmt: skip
def test_everyday_forms_still_pass(ws: Path, command: str) -> None:
    CommandGuard(workspace=ws).check(command, confirmed=True)


def test_scripts_and_makefiles_are_read_in_guard_only_mode(ws: Path) -> None:
    out = ws.parent / "out"
    (ws / "evil.sh").write_text(f"echo hi\nrm -rf {out}\n")
    (ws / "ok.sh").write_text("echo hi > made.txt\nls\n")
    (ws / "run.sh").write_text(f"#!/bin/sh\ntouch {out}/x\n")
    (ws / "Makefile").write_text(f"all:\n\t@echo building\n\trm -rf {out}\n")
    guard = CommandGuard(workspace=ws)
    for command in ("bash evil.sh", "sh -e evil.sh", "source evil.sh", ". ./evil.sh", "./run.sh", "make"):
        guard.check(command, confirmed=True)  # sandboxed: the sandbox holds what the file does
        with pytest.raises(CommandDenied, match=r"script it runs|Makefile it reads"):
            guard.check(command, confirmed=True, read_files=True)
    guard.check("bash ok.sh", read_files=True)
    (ws / "Makefile").write_text("X := $(shell rm -rf ~)\nall:\n\techo $(X)\n")
    with pytest.raises(CommandDenied, match="Makefile"):
        guard.check("make", read_files=True)


@pytest.mark.anyio
async def test_guard_only_kills_what_left_the_process_group(ws: Path) -> None:
    marker = f"{random.randrange(10**5, 10**6)}.{random.randrange(10**6)}"
    (ws / "bg.sh").write_text(f"setsid sleep {marker} &\n( ( setsid sleep {marker} & ) & )\necho started\n")
    workspace = Workspace(ws, sandbox="off", confirm_commands=False)
    out = await workspace.run_command("bash bg.sh")
    assert "started" in out
    deadline = time.monotonic() + 3
    while processes_with(marker) and time.monotonic() < deadline:  # noqa: ASYNC110  (no event for a death)
        await anyio.sleep(0.05)
    assert processes_with(marker) == []
    assert "off: reads are not confined" in "\n".join(f"off: {p}" for p in workspace.protections_off)
