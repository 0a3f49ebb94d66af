"""``WorkflowClock``: agcore's ids and times from Temporal's deterministic sources.

Inside a workflow every id (``workflow.uuid4()``, seeded per run and replayed identically) and every
timestamp (``workflow.now()``, the time of the current workflow task as recorded in history) comes out
the same on every replay, so a replayed turn rebuilds byte-identical messages and requests.
"""

from __future__ import annotations

from temporalio import workflow

from agcore._clock import SystemClock

__all__ = ["RecordingClock", "WorkflowClock"]


class WorkflowClock:
    """The clock (``agcore.Clock``) a workflow runs the loop under, ``use_clock(WorkflowClock())``:
    every id and time the loop makes replays identically. Only valid inside workflow code."""

    __slots__ = ()

    def new_id(self) -> str:
        """An id from ``workflow.uuid4()``: the same on every replay."""
        return workflow.uuid4().hex

    def now(self) -> float:
        """The workflow's time (``workflow.now()``), as epoch seconds: the same on every replay."""
        return workflow.now().timestamp()

    def monotonic(self) -> float:
        """The workflow's event-loop time: deterministic and never decreasing within a run."""
        return workflow.time()

    def __repr__(self) -> str:
        return "WorkflowClock()"


class RecordingClock(WorkflowClock):
    """The clock observers run under inside a workflow: the workflow's times, but ids from the system.

    Observers do not run during a replay, so if their ids came from ``workflow.uuid4()`` a replay
    would draw a different sequence of ids for everything after them; drawn from the system, they
    leave the workflow's sequence alone (an observer's ids only ever go to its own records).
    """

    __slots__ = ()

    def new_id(self) -> str:
        """An id from the system (observers' ids never enter the workflow's own sequence)."""
        return _SYSTEM.new_id()

    def __repr__(self) -> str:
        return "RecordingClock()"


_SYSTEM = SystemClock()
