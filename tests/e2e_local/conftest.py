"""The opt-in end-to-end suite against a real small model served by llama.cpp (``make e2e-local``).

Skipped unless ``AGCORE_E2E_GGUF`` names a GGUF file. Settings (environment):

* ``AGCORE_E2E_GGUF``: the model file (docs/local-models-e2e.md says how to get one);
* ``AGCORE_E2E_LLAMA_SERVER``: a llama-server binary to use instead of finding or building one;
* ``AGCORE_E2E_TIMEOUT`` (300): seconds per task; ``AGCORE_E2E_MAX_TURNS`` (12): turn cap per task;
* ``AGCORE_E2E_CTX`` (8192), ``AGCORE_E2E_THREADS`` (2), ``AGCORE_E2E_TEMP`` (0): the server's
  context size, threads and default sampling temperature;
* ``AGCORE_E2E_TEXT_TOOLS`` (unset): on/off/auto forces agcore's text-mode tool calls (``--text-tools``
  where the CLI has it; ``text_mode_tools`` for the plans); unset keeps agcore's defaults;
* ``AGCORE_E2E_CONSTRAINED`` (unset): on/off/auto forces agcore's constrained calls
  (``--constrained-calls``; ``constrained_calls`` for the plans); unset keeps agcore's default;
* ``AGCORE_E2E_CHECKED`` (unset): 1 passes each task's acceptance check (``--check CMD`` where
  ``agcore run --help`` lists it; a plan's ``check:`` where plans take one);
* ``AGCORE_E2E_SET`` (``tasks``): which tasks run: ``tasks`` (the project's thirteen) or ``heldout``
  (twelve others of the same kinds, never used to tune agcore: ``heldout.py``);
* ``AGCORE_E2E_OUT`` (``.e2e-local/`` in the repository): where results.json, results.md and the logs go.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e_local.llama_server import RunningServer, build_llama_server, start_llama_server
from tests.e2e_local.runner import TaskResult, cli_flags, markdown_table, write_results
from tests.e2e_local.task_sets import TASK_SETS
from tests.e2e_local.tasks import Task

_REPO = Path(__file__).resolve().parents[2]
_RESULTS: list[TaskResult] = []


def gguf_path() -> Path | None:
    """The model file the user pointed at, or None (the suite skips)."""
    value = os.environ.get("AGCORE_E2E_GGUF", "").strip()
    if not value:
        return None
    path = Path(value).expanduser()
    return path if path.is_file() else None


def setting(name: str, default: int) -> int:
    return int(os.environ.get(f"AGCORE_E2E_{name}", str(default)))


def text_tools() -> str | None:
    value = os.environ.get("AGCORE_E2E_TEXT_TOOLS", "").strip().lower()
    if value and value not in ("on", "off", "auto"):
        raise pytest.UsageError(f"AGCORE_E2E_TEXT_TOOLS={value}: choose on, off or auto")
    return value or None


def constrained() -> str | None:
    value = os.environ.get("AGCORE_E2E_CONSTRAINED", "").strip().lower()
    if value and value not in ("on", "off", "auto"):
        raise pytest.UsageError(f"AGCORE_E2E_CONSTRAINED={value}: choose on, off or auto")
    return value or None


def checked() -> bool:
    return os.environ.get("AGCORE_E2E_CHECKED", "").strip().lower() in ("1", "yes", "on", "true")


def task_set() -> tuple[Task, ...]:
    """The tasks ``AGCORE_E2E_SET`` names (default: the project's own)."""
    value = os.environ.get("AGCORE_E2E_SET", "tasks").strip().lower() or "tasks"
    if value not in TASK_SETS:
        raise pytest.UsageError(f"AGCORE_E2E_SET={value}: choose {' or '.join(TASK_SETS)}")
    return TASK_SETS[value]


def out_dir() -> Path:
    return Path(os.environ.get("AGCORE_E2E_OUT", str(_REPO / ".e2e-local"))).expanduser()


@pytest.fixture(scope="session")
def llama() -> Iterator[RunningServer]:
    gguf = gguf_path()
    if gguf is None:
        wanted = os.environ.get("AGCORE_E2E_GGUF")
        pytest.skip(f"AGCORE_E2E_GGUF={wanted} is not a file" if wanted else
                    "set AGCORE_E2E_GGUF to a GGUF model file to run the local-model e2e suite "
                    "(docs/local-models-e2e.md)")
    binary = build_llama_server()
    out = out_dir()
    out.mkdir(parents=True, exist_ok=True)
    temperature = os.environ.get("AGCORE_E2E_TEMP", "0")
    with start_llama_server(binary, gguf, log=out / "llama-server.log", context=setting("CTX", 8192),
                            threads=setting("THREADS", 2), alias=gguf.stem,
                            extra=("--temp", temperature, "--seed", "1")) as server:
        yield server


def record(result: TaskResult) -> None:
    _RESULTS.append(result)


def _commit() -> str:
    done = subprocess.run(["git", "-C", str(_REPO), "describe", "--always", "--dirty"], capture_output=True,
                          text=True, check=False)
    return done.stdout.strip() or "unknown"


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _RESULTS:
        return
    gguf = gguf_path()
    title = f"agcore e2e-local: {gguf.name if gguf else '?'} on llama-server (agcore {_commit()})"
    flags = cli_flags(setting("MAX_TURNS", 12), setting("CTX", 8192), text_tools(), constrained())
    meta: dict[str, object] = {
        "model": str(gguf), "agcore": _commit(), "context": setting("CTX", 8192),
        "threads": setting("THREADS", 2), "server temperature": os.environ.get("AGCORE_E2E_TEMP", "0"),
        "per-task timeout (s)": setting("TIMEOUT", 300), "plan max_tool_turns": setting("MAX_TURNS", 12),
        "extra agcore run flags": " ".join(flags) or "(none: this CLI has none of the optional flags)",
        "text-mode tools asked for (AGCORE_E2E_TEXT_TOOLS)": text_tools() or "(agcore's default)",
        "constrained calls asked for (AGCORE_E2E_CONSTRAINED)": constrained() or "(agcore's default)",
        "acceptance checks passed (AGCORE_E2E_CHECKED)": checked(),
        "task set (AGCORE_E2E_SET)": os.environ.get("AGCORE_E2E_SET", "tasks") or "tasks",
    }
    markdown = write_results(_RESULTS, out_dir(), title=title, meta=meta)
    terminalreporter.write_sep("=", "local-model e2e results")
    terminalreporter.write(markdown_table(_RESULTS, title=title))
    terminalreporter.write_line(
        f"written to {markdown} and {markdown.with_suffix('.json')}; logs in {out_dir()}")
