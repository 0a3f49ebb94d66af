"""Cold imports stay lean, and the lazily loaded names still work.

What a program pays for ``from agcore.agent import AgentBuilder, AgentSession, BasicAgent`` is the
kernel only: no vendor SDK or HTTP client (a provider loads its own when it is created), no
workspace tools, SQLite stores, context compaction, plans or dependency-injector (loaded by
``AgentBuilder.build()``), and no pydantic model built (each is built on its first use). Each check
runs in a fresh interpreter, as ``sys.modules`` of the test process holds everything.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# Must not be loaded by importing the kernel (agcore.agent, agcore.llm, agcore.tools, agcore.hooks).
HEAVY = (
    "anthropic",
    "openai",
    "httpx",
    "httpx2",
    "json_repair",
    "unidiff",
    "yaml",
    "sqlite3",
    "starlette",
    "fastapi",
    "dependency_injector",
    "importlib.metadata",  # pydantic's plugin scan: a sign that a model was built at import
    "agcore.tools.workspace",
    "agcore.tools._command_guard",
    "agcore.tools._shell_syntax",
    "agcore.memory._sqlite",
    "agcore.memory._session_store",
    "agcore.context",
    "agcore.agent._bundle",
    "agcore.agent.plans._plan",
    "agcore.agent.plans._task_agent",
    "agcore.llm.providers.anthropic",
    "agcore.llm.providers.openai",
)

PACKAGES = (
    "agcore", "agcore.agent", "agcore.context", "agcore.hooks", "agcore.llm", "agcore.memory", "agcore.tools",
    "agcore.code",
)


def run_python(code: str) -> object:
    """Run ``code`` in a fresh interpreter; it prints one JSON value, returned here."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    "statement",
    [
        "import agcore",
        "import agcore.llm",
        "import agcore.tools",
        "import agcore.hooks",
        "from agcore.agent import AgentBuilder, AgentSession, BasicAgent; from agcore.tools import tool",
    ],
)
def test_the_kernel_imports_without_heavy_modules(statement: str) -> None:
    loaded = run_python(
        f"""
        import json, sys
        {statement}
        print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
        """
    )
    assert loaded == [], (
        f"`{statement}` loads {loaded}: import them where they are used (or lazily in the package "
        "__init__, see agcore._lazy), so the kernel's import stays cheap"
    )


def test_the_code_package_loads_tree_sitter_and_numpy_on_first_use() -> None:
    loaded = run_python(
        """
        import json, sys
        import agcore.code
        print(json.dumps([m for m in ("tree_sitter", "numpy", "sqlite3") if m in sys.modules]))
        """
    )
    assert loaded == []


def test_no_model_is_built_at_import() -> None:
    built = run_python(
        """
        import json
        import agcore.agent, agcore.context, agcore.hooks, agcore.llm, agcore.memory, agcore.tools
        from pydantic import BaseModel

        def subclasses(cls):
            for sub in cls.__subclasses__():
                yield sub
                yield from subclasses(sub)

        print(json.dumps(sorted({f"{c.__module__}.{c.__qualname__}" for c in subclasses(BaseModel)
                                 if c.__module__.startswith("agcore") and c.__pydantic_complete__})))
        """
    )
    assert built == [], (
        f"{built} are built at import: agcore models use defer_build=True, and module constants are "
        "made with model_construct(), so the validators are built on first use"
    )


def test_every_exported_name_resolves_and_is_listed() -> None:
    problems = run_python(
        f"""
        import importlib, json
        problems = []
        for name in {PACKAGES!r}:
            package = importlib.import_module(name)
            listed = set(dir(package))  # before any lazy name is loaded
            for export in package.__all__:
                try:
                    value = getattr(package, export)
                except AttributeError as exc:
                    problems.append(f"{{name}}.{{export}}: {{exc}}")
                    continue
                if export not in listed:
                    problems.append(f"{{name}}.{{export}} is missing from dir()")
                home = getattr(value, "__module__", None)
                if isinstance(value, type) and home and home.startswith(name):
                    if getattr(importlib.import_module(home), export, None) is not value:
                        problems.append(f"{{name}}.{{export}} is not {{home}}.{{export}}")
            try:
                getattr(package, "NoSuchName")
            except AttributeError as exc:
                if "NoSuchName" not in str(exc):
                    problems.append(f"{{name}}: unhelpful AttributeError {{exc}}")
            else:
                problems.append(f"{{name}}.NoSuchName did not raise AttributeError")
        print(json.dumps(problems))
        """
    )
    assert problems == []


def test_star_import_loads_the_lazy_names() -> None:
    names = run_python(
        """
        import json
        from agcore.agent import *
        from agcore.tools import *
        from agcore.memory import *
        print(json.dumps([n for n in ("RuntimeBundle", "DefaultTaskAgent", "Plan", "Workspace",
                                      "CommandGuard", "SqliteMemoryStore", "SqliteSessionStore")
                          if n not in globals()]))
        """
    )
    assert names == []


def test_every_model_builds() -> None:
    """Deferred models fail on first use, not at import: build them all here instead."""
    failures = run_python(
        """
        import importlib, json, pkgutil
        import agcore
        from pydantic import BaseModel

        skip = ("agcore.cli", "agcore.integrations", "agcore.plugins")  # optional extras
        for info in pkgutil.walk_packages(agcore.__path__, "agcore."):
            if not info.name.startswith(skip):
                importlib.import_module(info.name)

        def subclasses(cls):
            for sub in cls.__subclasses__():
                yield sub
                yield from subclasses(sub)

        failures = []
        for model in set(subclasses(BaseModel)):
            if model.__module__.startswith("agcore"):
                try:
                    model.model_rebuild(force=True)
                except Exception as exc:
                    failures.append(f"{model.__module__}.{model.__qualname__}: {exc}")
        print(json.dumps(failures))
        """
    )
    assert failures == []


def test_agent_builder_build_loads_the_bundle() -> None:
    loaded = run_python(
        """
        import json, sys
        from agcore.agent import AgentBuilder
        from agcore.testing import ScriptedProvider

        bundle = AgentBuilder().provider(ScriptedProvider(["hi"])).build()
        print(json.dumps([type(bundle).__name__, "dependency_injector" in sys.modules,
                          bundle.config().max_turns > 0]))
        """
    )
    assert loaded == ["DynamicContainer", True, True]


def test_the_first_names_a_user_reaches_for_come_from_the_top_package() -> None:
    loaded = run_python(
        f"""
        import json, sys
        import agcore
        cheap = [m for m in {HEAVY!r} + ("agcore.agent", "pydantic") if m in sys.modules]
        from agcore import AgentBuilder, AgentSession, BasicAgent, tool, TaskAgent, Plan, DefaultTaskAgent
        from agcore.agent import AgentBuilder as builder
        print(json.dumps([cheap, AgentBuilder is builder, Plan.__module__]))
        """
    )
    assert loaded == [[], True, "agcore.agent.plans._plan"]  # `import agcore` alone loads none of it
