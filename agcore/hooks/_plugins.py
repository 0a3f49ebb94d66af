"""Plugin validation on top of pluggy's: unknown hook names and hook-less plugins are errors."""

from __future__ import annotations

import difflib

import pluggy
from pluggy import HookCaller, PluginValidationError

from agcore.hooks._markers import PROJECT_NAME

__all__ = ["check_plugin", "default_plugin_name"]


def default_plugin_name(pm: pluggy.PluginManager, plugin: object) -> str:
    """pluggy names a plugin by its ``__name__`` (modules, classes) or else by ``id()``; an instance is
    named by its class instead, so logs and errors say ``AuditPlugin`` (``AuditPlugin#2`` for a second)."""
    if getattr(plugin, "__name__", None):
        return pm.get_canonical_name(plugin)
    base = type(plugin).__name__
    name, n = base, 1
    while pm.has_plugin(name):
        n += 1
        name = f"{base}#{n}"
    return name


def _spec_names(pm: pluggy.PluginManager) -> list[str]:
    return sorted(name for name, caller in vars(pm.hook).items() if caller.has_spec())


def check_plugin(pm: pluggy.PluginManager, plugin: object, name: str) -> None:
    """Raise ``PluginValidationError`` when ``plugin`` implements a hook no spec declares, or none at all."""
    known = _spec_names(pm)
    found = 0
    for attr in dir(plugin):
        opts = pm.parse_hookimpl_opts(plugin, attr)
        if opts is None:
            continue
        found += 1
        hook_name = opts.get("specname") or attr
        caller: HookCaller | None = getattr(pm.hook, hook_name, None)
        if (caller is None or not caller.has_spec()) and not opts.get("optionalhook"):
            close = difflib.get_close_matches(hook_name, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise PluginValidationError(
                plugin,
                f"plugin {name!r} implements hook {hook_name!r}, which no {PROJECT_NAME} hookspec declares: "
                f"{hint}Known hooks: {', '.join(known)}. Rename the method (or set "
                "@hookimpl(specname=...)); for a hook of another plugin that may be absent, use "
                "@hookimpl(optionalhook=True).",
            )
    if not found:
        raise PluginValidationError(
            plugin,
            f"plugin {name!r} ({plugin!r}) implements no {PROJECT_NAME} hook: mark its hook methods "
            f"with @agcore.hooks.hookimpl (pluggy.HookimplMarker({PROJECT_NAME!r})). "
            f"Known hooks: {', '.join(known)}.",
        )
