"""Unix sockets in the workspace (tryout finding 7): a host process listening on a socket file inside
the workspace must not take connections from a sandboxed command. asyncio only: this is about the
sandbox's mounts, not the event loop."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agcore.tools._sockets import SocketScan
from agcore.tools.workspace import Workspace
from tests.tools.sandbox_support import require_bwrap, scratch_dir

CONNECT = (
    "import socket, sys\n"
    "c = socket.socket(socket.AF_UNIX)\n"
    "try:\n    c.connect(sys.argv[1]); c.sendall(b'EXFIL'); print('CONNECTED')\n"
    "except OSError as e:\n    print('REFUSED', e)\n"
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def scratch() -> Iterator[Path]:
    yield from scratch_dir()


class _UnixListener:
    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(str(path))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
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


@pytest.mark.anyio
@pytest.mark.parametrize("where", ["host.sock", "deep/er/run/agent.sock"])
async def test_a_socket_in_the_workspace_is_unreachable_from_the_sandbox(scratch: Path, where: str) -> None:
    require_bwrap()
    ws_root = scratch / "ws"
    (ws_root / where).parent.mkdir(parents=True)
    ws = Workspace(ws_root, sandbox="required", confirm_commands=False)
    ws.write_file("connect.py", CONNECT)
    await ws.run_command("true")  # a first scan before the socket exists: the cache must notice it
    listener = _UnixListener(ws_root / where)
    try:
        out = await ws.run_command(["python3", "connect.py", where])
    finally:
        listener.close()
    assert listener.connections == 0
    assert not listener.received
    assert "REFUSED" in out
    assert (ws_root / where).is_socket()  # masked inside the sandbox only, untouched on the host


@pytest.mark.anyio
async def test_guard_only_mode_does_not_scan(scratch: Path) -> None:
    ws_root = scratch / "ws"
    ws_root.mkdir()
    ws = Workspace(ws_root, sandbox="off", confirm_commands=False)
    listener = _UnixListener(ws_root / "host.sock")
    try:
        ws.write_file("connect.py", CONNECT)
        out = await ws.run_command(["python3", "connect.py", "host.sock"])
    finally:
        listener.close()
    assert "CONNECTED" in out  # guard-only is not a boundary: said in docs/tools.md


def test_the_scan_finds_new_sockets_and_forgets_removed_ones(tmp_path: Path) -> None:
    scan = SocketScan(tmp_path)
    assert scan.sockets() == []
    (tmp_path / "a" / "b").mkdir(parents=True)
    first = socket.socket(socket.AF_UNIX)
    first.bind(str(tmp_path / "a" / "b" / "s1"))
    assert scan.sockets() == [tmp_path / "a" / "b" / "s1"]
    second = socket.socket(socket.AF_UNIX)
    second.bind(str(tmp_path / "s2"))
    assert scan.sockets() == [tmp_path / "a" / "b" / "s1", tmp_path / "s2"]
    (tmp_path / "a" / "b" / "s1").unlink()
    (tmp_path / "link").symlink_to(tmp_path / "s2")
    assert scan.sockets() == [tmp_path / "s2"]  # symlinks are not followed
    first.close()
    second.close()
