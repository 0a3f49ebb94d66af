"""The pluggy markers for agcore hooks: ``@hookspec`` declares a hook, ``@hookimpl`` implements one."""

from __future__ import annotations

from typing import Final

import pluggy

__all__ = ["ENTRYPOINT_GROUP", "PROJECT_NAME", "hookimpl", "hookspec"]

#: The pluggy project name; a ``PluginManager`` for agcore hooks must be created with it.
PROJECT_NAME: Final = "agcore"
#: The entry-point group plugins are published under (``[project.entry-points.agcore]``).
ENTRYPOINT_GROUP: Final = "agcore"

hookspec: Final = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl: Final = pluggy.HookimplMarker(PROJECT_NAME)
