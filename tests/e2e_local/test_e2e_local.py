"""The local-model tasks, each a test: the task runs against llama-server and the workspace says
whether it was achieved. Opt-in (``make e2e-local``); skipped unless AGCORE_E2E_GGUF names a model."""

from __future__ import annotations

import shutil

import pytest

from tests.e2e_local.conftest import checked, constrained, out_dir, record, setting, task_set, text_tools
from tests.e2e_local.llama_server import RunningServer
from tests.e2e_local.runner import run_task
from tests.e2e_local.tasks import Task

TASKS = task_set()


# The runner caps each task itself (AGCORE_E2E_TIMEOUT); the first test also waits for the build
# and the model to load, so pytest-timeout's cap does not apply here.
@pytest.mark.timeout(0)
@pytest.mark.parametrize("task", TASKS, ids=[t.name for t in TASKS])
def test_local_model_task(task: Task, llama: RunningServer, tmp_path_factory: pytest.TempPathFactory) -> None:
    # A fresh, empty workspace per task, at the same path every time: the system prompt names it, and
    # an unchanged prompt prefix lets llama-server reuse its cache instead of re-reading ~2k tokens.
    workspace = tmp_path_factory.getbasetemp() / "workspace"
    shutil.rmtree(workspace, ignore_errors=True)
    workspace.mkdir()
    result = run_task(task, workspace, base_url=llama.base_url, model=llama.model,
                      timeout=setting("TIMEOUT", 300), max_turns=setting("MAX_TURNS", 12),
                      context=setting("CTX", 8192), logs=out_dir() / "logs", text_tools=text_tools(),
                      constrained=constrained(), checked=checked())
    record(result)
    shutil.copytree(workspace, out_dir() / "logs" / f"{task.name}.workspace", dirs_exist_ok=True)
    if not result.achieved:
        pytest.fail(f"{task.name} not achieved: {result.reason} (log: {out_dir() / 'logs'}/{task.name}.log)",
                    pytrace=False)
