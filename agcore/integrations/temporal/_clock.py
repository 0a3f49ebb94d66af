"""``WorkflowClock``: agcore's ids and times from Temporal's deterministic sources.

Inside a workflow every id (``workflow.uuid4()``, seeded per run and replayed identically) and every
timestamp (``workflow.now()``, the time of the current workflow task as recorded in history) comes out
the same on every replay, so a replayed turn rebuilds byte-identical messages and requests.
"""

from __future__ import annotations

from temporalio import workflow

__all__ = ["WorkflowClock"]


class WorkflowClock:
    """The ``agcore._clock.Clock`` a workflow runs the loop under (``use_clock(WorkflowClock())``).
    Only valid inside workflow code."""

    __slots__ = ()

    def new_id(self) -> str:
        return workflow.uuid4().hex

    def now(self) -> float:
        return workflow.now().timestamp()

    def monotonic(self) -> float:
        # The workflow's event loop time: deterministic and never decreasing within a run.
        return workflow.time()

    def __repr__(self) -> str:
        return "WorkflowClock()"
