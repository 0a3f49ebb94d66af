"""The suite's task sets by name: the project's thirteen (``tasks``) and twelve held out (``heldout``);
``AGCORE_E2E_SET`` and the peers bench's ``--set`` pick one."""

from __future__ import annotations

from tests.e2e_local.heldout import HELDOUT
from tests.e2e_local.tasks import TASKS, Task

__all__ = ["TASK_SETS"]

TASK_SETS: dict[str, tuple[Task, ...]] = {"tasks": TASKS, "heldout": HELDOUT}
