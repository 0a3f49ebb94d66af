"""Finding or building llama.cpp's ``llama-server``, and running it on loopback for the e2e suite.

The binary comes from, in order: ``$AGCORE_E2E_LLAMA_SERVER``, ``llama-server`` on ``PATH``, or a build
cached under ``~/.cache/agcore-e2e`` (``$AGCORE_E2E_CACHE``). The build uses the llama.cpp sources
vendored in the ``llama-cpp-python`` sdist (fetched with ``pip download``, the one registry this needs)
and cmake. ``GGML_NATIVE`` is off and AVX2/FMA/F16C are named explicitly: a native build on these
shared virtual CPUs crashes on the first matrix multiply. The web UI is not built and nothing is
downloaded during the build (``LLAMA_USE_PREBUILT_UI=OFF``, no OpenSSL/curl).

Command line (what ``make e2e-local`` calls first)::

    python -m tests.e2e_local.llama_server build   # prints the binary's path, building it if needed
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

__all__ = [
    "LLAMA_CPP_PYTHON_VERSION", "CMAKE_FLAGS", "BuildError", "RunningServer", "build_llama_server",
    "cache_dir", "find_llama_server", "free_port", "start_llama_server",
]

#: The llama-cpp-python sdist whose vendored llama.cpp is built (pinned: a build is reproducible).
LLAMA_CPP_PYTHON_VERSION = "0.3.36"
#: A portable x86-64 build with AVX2: no -march=native, no HTTPS, no web UI, only the server target.
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON",
    "-DGGML_AVX512=OFF", "-DGGML_BMI2=ON",
    "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_BUILD_SERVER=ON", "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF", "-DLLAMA_OPENSSL=OFF", "-DLLAMA_CURL=OFF",
)
#: Build jobs: the machines this runs on are small and shared.
BUILD_JOBS = int(os.environ.get("AGCORE_E2E_BUILD_JOBS", "2"))


class BuildError(RuntimeError):
    """llama-server could not be found or built; the message says what to install or set."""


def cache_dir() -> Path:
    """Where the sdist, the build tree and the binary are kept between runs."""
    return Path(os.environ.get("AGCORE_E2E_CACHE", "~/.cache/agcore-e2e")).expanduser()


def _cached_binary() -> Path:
    return cache_dir() / f"llama-cpp-python-{LLAMA_CPP_PYTHON_VERSION}" / "bin" / "llama-server"


def find_llama_server() -> Path | None:
    """An existing llama-server: ``$AGCORE_E2E_LLAMA_SERVER``, then ``PATH``, then the cached build."""
    explicit = os.environ.get("AGCORE_E2E_LLAMA_SERVER")
    if explicit:
        path = Path(explicit).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise BuildError(f"AGCORE_E2E_LLAMA_SERVER={explicit} is not an executable file")
        return path
    on_path = shutil.which("llama-server")
    if on_path:
        return Path(on_path)
    cached = _cached_binary()
    return cached if cached.is_file() else None


def build_llama_server(log: Path | None = None) -> Path:
    """The llama-server binary, built from the llama-cpp-python sdist if none is found (minutes)."""
    found = find_llama_server()
    if found is not None:
        return found
    for tool in ("cmake", "c++", "make"):
        if shutil.which(tool) is None:
            raise BuildError(f"building llama-server needs {tool}: apt-get install cmake build-essential")
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    sources = _sources(root)
    build = root / f"build-{LLAMA_CPP_PYTHON_VERSION}"
    log = log or root / "build.log"
    with log.open("a", encoding="utf-8") as out:
        _run(["cmake", "-S", str(sources), "-B", str(build), *CMAKE_FLAGS], out)
        _run(["cmake", "--build", str(build), "--target", "llama-server", "-j", str(BUILD_JOBS)], out)
    built = build / "bin" / "llama-server"
    if not built.is_file():
        raise BuildError(f"the build finished without {built}; see {log}")
    target = _cached_binary()
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(built, target)
    return target


def _sources(root: Path) -> Path:
    """llama.cpp's sources from the sdist, downloaded and unpacked once."""
    unpacked = root / "src" / f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}"
    vendored = unpacked / "vendor" / "llama.cpp"
    if (vendored / "CMakeLists.txt").is_file():
        return vendored
    archive = root / "src" / f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"
    if not archive.is_file():
        # Only this package as source: its build dependencies may come as wheels.
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "llama-cpp-python",
             "-d", str(archive.parent), f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}"],
            check=True,
        )
    with tarfile.open(archive) as tar:
        tar.extractall(archive.parent, filter="data")
    if not (vendored / "CMakeLists.txt").is_file():
        raise BuildError(f"{archive} holds no vendor/llama.cpp")
    return vendored


def _run(command: list[str], out: object) -> None:
    print("+", " ".join(command), flush=True)
    done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)  # type: ignore[arg-type]
    if done.returncode != 0:
        raise BuildError(f"{command[0]} failed (exit {done.returncode}); see the log in {cache_dir()}")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class RunningServer:
    """A llama-server process serving one model on loopback."""

    process: subprocess.Popen[bytes]
    port: int
    model: str
    log: Path

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible API root (what ``--base-url`` takes)."""
        return f"http://127.0.0.1:{self.port}/v1"


@contextlib.contextmanager
def start_llama_server(
    binary: Path, gguf: Path, *, log: Path, context: int = 8192, threads: int = 2,
    alias: str = "local-model", extra: tuple[str, ...] = (), ready_timeout: float = 600.0,
) -> Iterator[RunningServer]:
    """Run ``binary`` serving ``gguf`` on a free loopback port until the block ends (``extra``: more
    server options); waits for ``/health`` to say ok (loading a model on a busy machine takes a while)."""
    port = free_port()
    command = [
        str(binary), "--model", str(gguf), "--alias", alias, "--host", "127.0.0.1", "--port", str(port),
        "--ctx-size", str(context), "--threads", str(threads), "--threads-batch", str(threads),
        "--parallel", "1", "--no-webui", *extra,
    ]
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_healthy(process, port, log, ready_timeout)
        yield RunningServer(process, port, alias, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_healthy(process: subprocess.Popen[bytes], port: int, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(encoding="utf-8", errors="replace")[-2000:]
            raise BuildError(f"llama-server exited with {process.returncode} while starting:\n{tail}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    raise BuildError(f"llama-server did not become healthy in {timeout:.0f}s; see {log}")


def main(argv: list[str]) -> int:
    if argv[:1] != ["build"]:
        print("usage: python -m tests.e2e_local.llama_server build", file=sys.stderr)
        return 2
    try:
        print(build_llama_server())
    except (BuildError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
