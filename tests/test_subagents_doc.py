"""The Python examples of docs/subagents.md run as the page shows them, in order, as one script.

Offline: the page's ``anthropic:`` models become scripted ``docs:`` models (one script per agent,
picked by its system prompt), the workspace is a temporary directory. A block added to the page
without being run here fails ``test_the_page_has_the_blocks_this_test_runs``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agcore.llm import clear_provider_cache, register_provider_factory
from agcore.llm import factory as llm_factory
from agcore.testing import ScriptedProvider, tool_call_reply
from tests.agent._subagent_support import Scripts

DOC = Path(__file__).resolve().parents[1] / "docs" / "subagents.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def run_blocks(codes: list[str]) -> None:
    """Run the blocks in one namespace, in a thread of their own: they call ``anyio.run``, which refuses
    to start where an event loop already runs (as in tests/test_cookbook.py)."""
    namespace: dict[str, Any] = {"__name__": "subagents_doc"}
    failure: list[BaseException] = []

    def script() -> None:
        try:
            for index, code in enumerate(codes):
                exec(compile(code, f"{DOC}:block{index + 1}", "exec"), namespace)
        except BaseException as exc:  # re-raised in the test's thread
            failure.append(exc)

    thread = threading.Thread(target=script, name="subagents-doc")
    thread.start()
    thread.join(120)
    assert not thread.is_alive(), "the examples did not finish in 120 s"
    if failure:
        raise failure[0]


@pytest.fixture
def models(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[dict[str, ScriptedProvider]]:
    """``docs:<model>`` providers, by model id."""
    monkeypatch.chdir(tmp_path)
    saved = dict(llm_factory._factories)
    by_model: dict[str, ScriptedProvider] = {}
    register_provider_factory("docs", lambda model, **options: by_model[model])
    clear_provider_cache()
    yield by_model
    llm_factory._factories.clear()
    llm_factory._factories.update(saved)
    clear_provider_cache()


def test_the_page_has_the_blocks_this_test_runs() -> None:
    assert len(python_blocks()) == 3


def test_the_examples_run_as_written(
    models: dict[str, ScriptedProvider], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "CHANGES.md").write_text("1.4: sub-agents\n", encoding="utf-8")
    scripts = Scripts({
        "You plan the release and delegate.": [
            tool_call_reply("researcher", {"task": "What changed since 1.3?"}),
            tool_call_reply("writer", {"task": "Notes for: 1.4 adds sub-agents."}),
            "Drafted the 1.4 notes.",
        ],
        "You research one question and answer briefly.": [
            tool_call_reply("read_file", {"path": "CHANGES.md"}),
            "1.4 adds sub-agents.",
            "Merged: #12 sub-agents.",  # the plan's step 1
        ],
        "You write release notes.": ["# 1.4\n- Sub-agents."],
    })
    models["claude-sonnet-4-6"] = scripts.model
    cheap = ScriptedProvider(["# 1.4 (cheap)\n- Sub-agents (#12)."])
    models["claude-haiku-4-5"] = cheap
    codes = [code.replace('"anthropic:', '"docs:') for code in python_blocks()]
    run_blocks(codes)

    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "Drafted the 1.4 notes."
    # Persistence: each child saved beside its parent, loaded with its own agent; its task and answer.
    assert lines[1:7] == [
        "researcher 1", "  task:   What changed since 1.3?", "  answer: 1.4 adds sub-agents.",
        "writer 1", "  task:   Notes for: 1.4 adds sub-agents.", "  answer: # 1.4",
    ]
    # The plan: step 1 on the session's bundle, step 2 on the cheap one; the last step's result.
    assert "# 1.4 (cheap)" in out
    assert cheap.calls == 1
    assert "1.4: sub-agents" in str(scripts.requests[2].messages[-1].content)  # read_file's result
    assert (tmp_path / "release.db").exists()
