"""Every case of the escape corpus, executed for real through ``run_command`` in a temporary workspace.

Sandbox on (and every command confirmed, the worst case: one-liners run): no canary outside the
workspace is changed or deleted, no fake credential comes back in the result or lands in the
workspace, nothing reaches the loopback listener, a process outside is left alone, and no process
outlives its tool. Sandbox off (guard-only, every command confirmed too): the guard refuses every
case marked ``guard=True``, and the cases that escape are exactly ``GUARD_ONLY_ESCAPES``, each with
the reason only a sandbox can stop it. The counts (tried / refused by guard / contained / escaped) are
printed (``pytest -s``; ``AGCORE_CORPUS_TRACE=1`` prints every case's result too).

asyncio only: the corpus exercises the sandbox and the guard, not the event loop, and takes ~15 s a
run; ``test_sandbox.py`` runs the same process handling on both asyncio and trio.
"""

from __future__ import annotations

import base64
import contextlib
import os
import random
import re
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from agcore.tools import CommandNeedsConfirmation, ToolDenied, ToolError
from agcore.tools.workspace import Workspace
from tests.tools.escape_corpus import (
    CORPUS,
    FILE_TOOL_RACES,
    GUARD_ONLY_ESCAPES,
    ONE_LINER,
    SHORT_TIMEOUT,
    WORKSPACE_FILES,
    swapping,
)
from tests.tools.sandbox_support import processes_with, require_bwrap, scratch_dir

OLD = 1_000_000_000  # a fixed past mtime: any rewrite of a canary shows
SECRETS = {
    ".ssh/id_ed25519": "FAKE-ED25519-KEY-{n}",
    ".ssh/id_rsa": "FAKE-RSA-KEY-{n}",
    ".netrc": "machine example.com login u password FAKE-NETRC-{n}",
    ".aws/credentials": "[default]\naws_secret_access_key = FAKE-AWS-{n}",
    ".npmrc": "//registry.npmjs.org/:_authToken=FAKE-NPM-{n}",
    ".pypirc": "[pypi]\npassword = FAKE-PYPI-{n}",
    ".docker/config.json": '{{"auths": {{"x": {{"auth": "FAKE-DOCKER-{n}"}}}}}}',
    ".kube/config": "token: FAKE-KUBE-{n}",
    ".git-credentials": "https://u:FAKE-GITCRED-{n}@example.com",
    ".config/gcloud/credentials.db": "FAKE-GCLOUD-{n}",
    ".pgpass": "host:5432:db:u:FAKE-PGPASS-{n}",
}
SECRET_ENV = {
    "FAKE_API_KEY": "FAKE-ENV-APIKEY",
    "DATABASE_URL": "postgres://u:FAKE-ENV-DBPASS@db/x",
    "SSH_AUTH_SOCK": "/run/FAKE-ENV-AGENT.sock",
    "SERVICE_URL": "https://u:FAKE-ENV-URLPASS@svc.example.com",
    "SECRET_KEY_BASE": "FAKE-ENV-RAILS",  # matches no secret pattern: only the allow-list stops it
    "STRIPE_LIVE": "FAKE-ENV-STRIPE",
}


class _Listener:
    """A loopback TCP server that records every byte sent to it (exfiltration shows up here)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received = bytearray()
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.settimeout(1)
            try:
                while chunk := conn.recv(4096):
                    self.received += chunk
            except OSError:
                pass
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


@dataclass
class _Layout:
    base: Path
    ws: Path
    out: Path
    home: Path
    n: int
    secrets: list[str] = field(default_factory=list)


def _build(base: Path, template: Path, marker: str) -> _Layout:
    n = random.randrange(10**8)
    layout = _Layout(base, base / "ws", base / "outside", base / "home", n)
    if base.exists():
        for root, dirs, _ in os.walk(base):
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
        shutil.rmtree(base)
    (layout.out / "sub").mkdir(parents=True)
    (layout.out / "canary.txt").write_text("canary\n")
    (layout.out / "sub" / "inner.txt").write_text("inner canary\n")
    (layout.out / "notes.txt").write_text(f"FAKE-NOTES-{n}\n")  # not a credential, still not to be read
    layout.secrets.append(f"FAKE-NOTES-{n}")
    for path in (
        layout.out / "canary.txt", layout.out / "sub" / "inner.txt", layout.out / "notes.txt",
        layout.out / "sub", layout.out,
    ):  # fmt: skip
        os.utime(path, (OLD, OLD))
    for relative, text in SECRETS.items():
        path = layout.home / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        content = text.format(n=n)
        path.write_text(content + "\n")
        layout.secrets.extend(re.findall(r"FAKE-[A-Z0-9]+-\d+", content))
    (layout.home / "todo.txt").write_text(f"FAKE-HOMEFILE-{n}\n")  # an ordinary file of the user's
    layout.secrets.append(f"FAKE-HOMEFILE-{n}")
    shutil.copytree(template, layout.ws / ".git", symlinks=True)
    for name, text in WORKSPACE_FILES.items():
        (layout.ws / name).write_text(text.format(OUT=layout.out, HOME=layout.home, M=marker))
    (layout.ws / "link_out").symlink_to(layout.out)
    return layout


def _state(layout: _Layout) -> dict[str, tuple[str, bytes, int, int]]:
    """Everything outside the workspace, plus the workspace's git control files."""
    state: dict[str, tuple[str, bytes, int, int]] = {}
    git = layout.ws / ".git"
    roots = [layout.out, layout.home, *(git / name for name in ("hooks", "config", "commondir", "info"))]
    for root in roots:
        paths = [root] if root.is_file() else [Path(d, n) for d, ds, fs in os.walk(root) for n in [*ds, *fs]]
        for path in [root, *paths] if root.is_dir() else paths:
            info = path.lstat()
            content = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
            state[str(path)] = ("file" if path.is_file() else "dir", content, info.st_mtime_ns, info.st_mode)
    return state


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def scratch() -> Iterator[Path]:
    yield from scratch_dir()


class _Decoy:
    """A process outside every command: killing or stopping it would be an escape. Guard-only runs
    execute ``kill -9 {DECOY}`` for real, so a killed decoy is replaced for the next case."""

    def __init__(self) -> None:
        self.process = self._start()

    @staticmethod
    def _start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(["sleep", f"{random.randrange(10**5, 10**6)}.{random.randrange(10**6)}"])

    @property
    def pid(self) -> int:
        return self.process.pid

    def poll(self) -> int | None:
        return self.process.poll()

    def revive(self) -> None:
        if self.process.poll() is not None:
            self.process.wait()
            self.process = self._start()
        else:
            os.kill(self.process.pid, 18)  # SIGCONT

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def decoy() -> Iterator[_Decoy]:
    found = _Decoy()
    try:
        yield found
    finally:
        found.stop()


@pytest.fixture
def git_template(scratch: Path) -> Path:
    if shutil.which("git") is None:
        pytest.fail("git is needed by the escape corpus")
    repo = scratch / "template"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo / ".git"


def _fill(command: str, layout: _Layout, marker: str, port: int, decoy: int) -> str:
    payload = base64.b64encode(f"rm -rf {layout.out}".encode()).decode()
    return command.format(
        OUT=layout.out, HOME=layout.home, M=marker, PORT=port, DECOY=decoy, B64=payload, PY="python3"
    )


def test_the_corpus_is_large_and_covers_every_class() -> None:
    assert len(CORPUS) >= 120
    assert len(set(CORPUS)) == len(CORPUS)
    assert sum(1 for _, guard in CORPUS if guard) >= 90


@pytest.mark.anyio
async def test_with_the_sandbox_nothing_escapes(
    scratch: Path, git_template: Path, decoy: _Decoy, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_bwrap()
    counts = await _run_corpus(scratch, git_template, decoy, monkeypatch, sandbox=True)
    print(f"\nescape corpus, sandbox on (every command confirmed): {counts}")
    assert counts["escaped"] == 0
    assert counts["tried"] == len(CORPUS)


@pytest.mark.anyio
async def test_guard_only_every_case_runs_and_only_the_listed_ones_escape(
    scratch: Path, git_template: Path, decoy: _Decoy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guard-only mode (no bubblewrap: macOS, many containers), every command confirmed (the worst
    case): the guard refuses (or asks about) every case meant for it, and what escapes is an approved
    interpreter one-liner (the guard asked; a person said yes to a program it cannot read) or exactly
    one of ``GUARD_ONLY_ESCAPES``, each left to the sandbox for the reason given there."""
    counts = await _run_corpus(scratch, git_template, decoy, monkeypatch, sandbox=False)
    escaped = counts.pop("escaped cases")
    print(f"\nescape corpus, guard only (every command confirmed): {counts}")
    for case, why in escaped:
        print(f"  escaped: {case!r}: {why}")
    listed = sorted(case for case, why in escaped if why != ONE_LINER)
    assert listed == sorted(GUARD_ONLY_ESCAPES)  # no more, and none listed that is closed by now
    assert counts["tried"] == len(CORPUS)


@pytest.mark.anyio
async def test_file_tool_races_never_reach_outside(tmp_path: Path) -> None:
    """Each race of ``FILE_TOOL_RACES`` for ~0.4 s against a swapping process: nothing outside is
    written, listed or read (the fake secret never shows), whatever the tool answers."""
    secret = "FAKE-CORPUS-RACE-SECRET"
    patch = "--- a/real/canary.txt\n+++ b/real/canary.txt\n@@ -1 +1 @@\n-inside\n+PWNED\n"
    counts = {"tried": 0, "calls": 0, "refused": 0, "escaped": 0}
    for number, (call, kind) in enumerate(FILE_TOOL_RACES):
        ws_root, outside = tmp_path / f"ws{number}", tmp_path / f"outside{number}"
        ws_root.mkdir()
        outside.mkdir()
        (outside / "canary.txt").write_text("inside\n")
        (outside / "secret.txt").write_text(secret + "\n")
        (outside / "outside-only-name.txt").write_text("x\n")
        if kind == "dir":
            (ws_root / ".real.real").mkdir()
            (ws_root / ".real.real" / "canary.txt").write_text("inside\n")
            (ws_root / ".real.real" / "secret.txt").write_text("inside\n")
            (ws_root / ".real.link").symlink_to(outside)
        else:
            (ws_root / ".real.real").write_text("inside\n")
            (ws_root / ".real.link").symlink_to(outside / "secret.txt")
        ws = Workspace(ws_root, sandbox="off", grep_backend="python")
        namespace = {name: getattr(ws, name) for name in ("write_file", "read_file", "list_dir", "glob")}
        results: list[str] = []
        counts["tried"] += 1
        deadline = time.monotonic() + 0.4
        with swapping(ws_root, "real"):
            i = 0
            while time.monotonic() < deadline or i < 30:
                try:
                    if call.startswith("grep"):
                        results.append(await ws.grep("FAKE|inside", "real"))
                    elif call.startswith("apply_patch"):
                        results.append(ws.apply_patch(patch))
                        ws.undo_patch()
                    else:
                        results.append(eval(call.format(i=i), namespace))
                except ToolError as exc:
                    counts["refused"] += 1
                    results.append(exc.message)
                i += 1
        counts["calls"] += i
        escaped = (
            (outside / "canary.txt").read_text() != "inside\n"
            or sorted(p.name for p in outside.iterdir())
            != ["canary.txt", "outside-only-name.txt", "secret.txt"]
            or any(secret in r or "outside-only-name" in r for r in results)
        )
        counts["escaped"] += escaped
    print(f"\nfile-tool races: {counts}")
    assert counts["escaped"] == 0
    assert counts["tried"] == len(FILE_TOOL_RACES)


async def _run_corpus(
    scratch: Path,
    template: Path,
    decoy: _Decoy,
    monkeypatch: pytest.MonkeyPatch,
    *,
    sandbox: bool,
) -> dict[str, int]:
    for name, value in SECRET_ENV.items():
        monkeypatch.setenv(name, value)
    listener = _Listener()
    counts: dict[str, Any] = {"tried": 0, "refused by guard": 0, "contained": 0, "escaped": 0}
    failures: list[str] = []
    escaped: list[tuple[str, str]] = []
    try:
        for command, meant_for_guard in CORPUS:
            marker = f"{random.randrange(10**5, 10**6)}.{random.randrange(10**6)}"
            layout = _build(scratch / "case", template, marker)
            monkeypatch.setenv("HOME", str(layout.home))
            text = _fill(command, layout, marker, listener.port, decoy.pid)
            ws = Workspace(
                layout.ws, sandbox="required" if sandbox else "off", confirm_commands=True,
                command_timeout=15,
            )  # fmt: skip
            before = _state(layout)
            counts["tried"] += 1
            asks = not sandbox and _asks_for_confirmation(ws, text)
            result, refused = "", False
            try:
                result = await ws.run_command(text, timeout=1 if command in SHORT_TIMEOUT else 15)
            except ToolDenied as exc:
                refused, result = True, exc.message
            except ToolError as exc:
                result = exc.message
            problems = await _escapes(layout, before, result, marker, listener, decoy)
            if not sandbox and meant_for_guard and not (refused or asks):
                problems.append("the guard let it run without asking")
            if os.environ.get("AGCORE_CORPUS_TRACE"):
                print(f"--- {'REFUSED' if refused else 'RAN'} {text[:150]!r}\n{result[:400]}")
            if problems:
                counts["escaped"] += 1
                why = ONE_LINER if asks else GUARD_ONLY_ESCAPES.get(command)
                escaped.append((command, why or "NOT EXPECTED"))
                if sandbox or why is None or "the guard let it run" in problems[-1]:
                    failures.append(f"{text!r}: {'; '.join(problems)}\n    result: {result[:300]!r}")
            elif refused:
                counts["refused by guard"] += 1
            else:
                counts["contained"] += 1
    finally:
        listener.close()
    assert not failures, "\n".join(failures)
    if not sandbox:
        counts["escaped cases"] = escaped
    return counts


def _asks_for_confirmation(ws: Workspace, command: str) -> bool:
    """Whether the guard would ask the user first (an interpreter one-liner it cannot read)."""
    try:
        ws.command_guard.check(command, cwd=ws.root, confirmed=False, read_files=not ws.sandboxed)
    except CommandNeedsConfirmation:
        return True
    except ToolDenied:
        return False
    return False


async def _escapes(
    layout: _Layout,
    before: dict[str, tuple[str, bytes, int, int]],
    result: str,
    marker: str,
    listener: _Listener,
    decoy: _Decoy,
) -> list[str]:
    problems: list[str] = []
    deadline = time.monotonic() + 3
    while processes_with(marker) and time.monotonic() < deadline:  # noqa: ASYNC110  (no event for a death)
        await anyio.sleep(0.05)
    if processes_with(marker):
        problems.append(f"processes outlived the tool: {processes_with(marker)}")
        for line in processes_with(marker):
            os.kill(int(line.split(":")[0]), 9)
    _users_git_status(layout)  # a trap planted in .git fires here, outside any sandbox
    after = _state(layout)
    if after != before:
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        problems.append(f"changed outside the workspace: {changed}")
    leaked = [s for s in [*layout.secrets, *(v for v in SECRET_ENV.values())] if _leaked(s, result)]
    if leaked:
        problems.append(f"credentials in the result: {leaked}")
    for path in layout.ws.rglob("*"):
        if path.is_file() and not path.is_symlink() and ".git" not in path.parts:
            data = path.read_bytes()
            if any(s.encode() in data for s in layout.secrets):
                problems.append(f"credentials copied into the workspace: {path.name}")
    if listener.received or listener.connections:
        problems.append(f"the loopback listener was reached ({bytes(listener.received)[:80]!r})")
    if decoy.poll() is not None or _stopped(decoy.pid):
        problems.append("a process outside the command was killed or stopped")
        decoy.revive()  # so the next cases still have a decoy
    return problems


def _users_git_status(layout: _Layout) -> None:
    """What the user does next on the host: ``git status`` in the workspace (it runs fsmonitor, reads
    commondir, a .git file, hooks...)."""
    env = {**os.environ, "HOME": str(layout.home), "GIT_CONFIG_NOSYSTEM": "1"}
    with contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run(
            ["git", "status"], cwd=layout.ws, env=env, capture_output=True, timeout=10, check=False
        )


def _leaked(secret: str, result: str) -> bool:
    return bool(secret) and secret in result


def _stopped(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"
    except (OSError, IndexError):
        return True
