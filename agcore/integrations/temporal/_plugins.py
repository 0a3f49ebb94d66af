"""Which plugins run inside the workflows of a task queue.

A workflow cannot be handed objects by its worker (it is rebuilt from its history, anywhere), so the
worker factory records, per task queue, the functions making the plugins each workflow registers in
its own hook executor, and the workflow finds them by the task queue its ``AgentSpec`` recorded (the
same on every replay, also in a ``Replayer``, whose own task queue is another). A replayer registers
its factories as the default (key None). agcore is passed through Temporal's sandbox, so this table
is the worker process's own.

Two kinds: *plugins* run on every replay too (gatekeepers, rewrites: they must be deterministic);
*observers* (audit logs, tracing, logging) never run during a replay, so what they record is
recorded once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

__all__ = ["PluginFactory", "WorkflowPlugins", "plugins_for", "set_plugins"]

#: Makes the plugins of one workflow run (a fresh set per run: plugins may keep per-session state).
PluginFactory = Callable[[], Iterable[object]]


class WorkflowPlugins(NamedTuple):
    plugins: list[object]
    observers: list[object]


_factories: dict[str | None, tuple[PluginFactory | None, PluginFactory | None]] = {}


def set_plugins(
    task_queue: str | None, plugins: PluginFactory | None, observers: PluginFactory | None = None
) -> None:
    """Record (or, with both None, forget) the factories of ``task_queue``'s workflows (None: the
    default, for workflows of any task queue without their own)."""
    if plugins is None and observers is None:
        _factories.pop(task_queue, None)
    else:
        _factories[task_queue] = (plugins, observers)


def plugins_for(task_queue: str) -> WorkflowPlugins:
    """Fresh plugins and observers for a workflow of ``task_queue`` (none if nothing is recorded)."""
    plugins, observers = _factories.get(task_queue) or _factories.get(None) or (None, None)
    return WorkflowPlugins(
        list(plugins()) if plugins is not None else [], list(observers()) if observers is not None else []
    )
