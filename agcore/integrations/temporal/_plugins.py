"""Which plugins run inside the workflows of a task queue.

A workflow cannot be handed objects by its worker (it is rebuilt from its history, anywhere), so the
worker factory records, per task queue, a function making the plugins each workflow registers in its
own hook executor, and the workflow finds them by the task queue its ``AgentSpec`` recorded (the same
on every replay, also in a ``Replayer``, whose own task queue is another). A replayer registers its
factory as the default (key None). agcore is passed through Temporal's sandbox, so this table is the
worker process's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["PluginFactory", "plugins_for", "set_plugins"]

#: Makes the plugins of one workflow run (a fresh set per run: plugins may keep per-session state).
PluginFactory = Callable[[], Iterable[object]]

_factories: dict[str | None, PluginFactory] = {}


def set_plugins(task_queue: str | None, factory: PluginFactory | None) -> None:
    """Record (or, with None, forget) the plugin factory of ``task_queue``'s workflows (None: the
    default, for workflows of any task queue without their own)."""
    if factory is None:
        _factories.pop(task_queue, None)
    else:
        _factories[task_queue] = factory


def plugins_for(task_queue: str) -> list[object]:
    """A fresh set of the plugins for a workflow of ``task_queue`` (none if nothing is recorded)."""
    factory = _factories.get(task_queue) or _factories.get(None)
    return list(factory()) if factory is not None else []
