"""The two seed examples against the local model (opt-in, like the rest of tests/e2e_local: skipped
unless AGCORE_E2E_GGUF names a GGUF file). Each runs as a user runs it, a subprocess on the
llama-server of the suite, and is judged by what it left behind (files, memory), never by what the
model said: ``AGCORE_E2E_GGUF=... .venv/bin/python -m pytest tests/e2e_local/test_examples_e2e.py``."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from agcore.memory import KeywordRetriever, SqliteMemoryStore
from tests.e2e_local.conftest import out_dir, setting
from tests.e2e_local.llama_server import RunningServer

REPO = Path(__file__).resolve().parents[2]


def run_example(module: str, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m examples.<module> ARGS``, its output kept in the suite's log directory. The cap is
    longer than the CLI tasks' (1,200 s): the examples' prompts are longer, and a loaded 2-core
    machine reads ~3,000 tokens in 5 minutes."""
    env = {k: v for k, v in os.environ.items() if k not in ("AGCORE_MODEL", "OPENAI_BASE_URL")}
    started = time.monotonic()
    command = [sys.executable, "-m", f"examples.{module}", *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO,
                              timeout=setting("TIMEOUT", 1200), stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired as expired:  # judged like any other run: by what it left behind
        done = subprocess.CompletedProcess(command, -9, _text(expired.stdout), _text(expired.stderr))
    logs = out_dir() / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / f"example-{name}.log").write_text(
        f"$ python -m examples.{module} {' '.join(args)}\n[{time.monotonic() - started:.0f} s, exit "
        f"{done.returncode}]\n{done.stdout}\n--- stderr ---\n{done.stderr}", encoding="utf-8")
    return done


def _text(output: bytes | str | None) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


@pytest.mark.timeout(0)
def test_the_coding_agent_writes_and_runs_a_script(llama: RunningServer, tmp_path: Path) -> None:
    task = "Create the file hello.py that prints Hello, world! Then run it with python3 hello.py."
    done = run_example("coding_agent", "coding-agent-hello", task,
                       "-w", str(tmp_path), "--yes", "--base-url", llama.base_url, "--model", llama.model,
                       "--max-turns", str(setting("MAX_TURNS", 12)))
    script = tmp_path / "hello.py"
    assert script.is_file(), f"no hello.py (exit {done.returncode}): {done.stdout[-600:]}"
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=30,
                         check=False)
    assert "Hello, world" in ran.stdout, ran.stdout + ran.stderr
    assert (tmp_path / ".coding-agent" / "logs" / "audit.jsonl").is_file()


@pytest.mark.timeout(0)
def test_countbot_remembers_a_fact_in_sqlite(llama: RunningServer, tmp_path: Path) -> None:
    done = run_example("countbot", "countbot-remember",
                       "Please remember this for later: my favourite colour is teal.",
                       "--home", str(tmp_path), "--base-url", llama.base_url, "--model", llama.model,
                       "--max-iterations", str(setting("MAX_TURNS", 12)))

    async def remembered() -> list[str]:
        async with SqliteMemoryStore(tmp_path / "memory.db") as memory:
            return [hit.content for hit in await KeywordRetriever(memory).retrieve("favourite colour teal")]

    notes = anyio.run(remembered)
    assert any("teal" in note.lower() for note in notes), f"nothing remembered: {done.stdout[-600:]}"
