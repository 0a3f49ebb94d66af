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

from collections import OrderedDict
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


def plugins_for(task_queue: str, run_id: str | None = None) -> WorkflowPlugins:
    """Plugins and observers for a workflow of ``task_queue`` (none if nothing is recorded): fresh
    plugins; the observers of workflow run ``run_id`` made once per worker process, so that a run
    evicted from the worker's cache and rebuilt here keeps them (a tracer's open spans, say: they
    never run during the replay that rebuilds it, so they would otherwise never be ended)."""
    plugins, observers = _factories.get(task_queue) or _factories.get(None) or (None, None)
    made = list(plugins()) if plugins is not None else []
    if observers is None:
        return WorkflowPlugins(made, [])
    if run_id is None:
        return WorkflowPlugins(made, list(observers()))
    kept = _observers_of_runs.get(run_id)
    if kept is None:
        kept = _observers_of_runs[run_id] = list(observers())
        if len(_observers_of_runs) > MAX_KEPT_RUNS:
            _observers_of_runs.popitem(last=False)  # the oldest run: long over, or on another worker
    return WorkflowPlugins(made, kept)


#: How many workflow runs' observers a worker process keeps (oldest dropped first).
MAX_KEPT_RUNS = 10_000
_observers_of_runs: OrderedDict[str, list[object]] = OrderedDict()
