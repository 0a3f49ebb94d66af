"""The error a gatekeeper hook raises to the loop."""

from __future__ import annotations

__all__ = ["HookFailure"]


class HookFailure(Exception):
    """A gatekeeper hook implementation raised: the loop stops the turn (as ``HookBlocked``).

    ``error`` is the plugin's own exception (also chained as ``__cause__``).
    """

    def __init__(self, hook_name: str, plugin_name: str, error: BaseException) -> None:
        self.hook_name = hook_name
        self.plugin_name = plugin_name
        self.error = error
        super().__init__(
            f"plugin {plugin_name!r} failed in gatekeeper hook {hook_name!r} "
            f"({type(error).__name__}: {error}); the turn was stopped. Fix the plugin, "
            f"or unregister it with HookExecutor.unregister({plugin_name!r})."
        )

    def __reduce__(self) -> tuple[type[HookFailure], tuple[str, str, BaseException]]:
        # The default reduce would call __init__ with the message only: keep the three fields.
        return (type(self), (self.hook_name, self.plugin_name, self.error))
