"""``HookExecutor``: calls the agcore hooks of the plugins in a ``pluggy.PluginManager``, awaiting async
implementations and combining results per hook (see the package docstring for the table)."""

from __future__ import annotations

from typing import Any, Final, NamedTuple, cast

import pluggy
from pluggy import HookCaller, HookCallError

from agcore.hooks._calling import multicall
from agcore.hooks._context import HookContext, ToolCallDecision
from agcore.hooks._folds import Collect, First, Fold
from agcore.hooks._markers import ENTRYPOINT_GROUP, PROJECT_NAME
from agcore.hooks._plugins import check_plugin, default_plugin_name
from agcore.hooks._specs import HOOK_RULES, AgcoreHookSpecs, ConfirmationAnswer
from agcore.llm import AssistantMessage, LLMRequest, ToolResultBlock, ToolUseBlock, UserMessage

__all__ = ["HookExecutor", "PluginInfo"]


class PluginInfo(NamedTuple):
    """A registered plugin: its name, the plugin object, and the hooks it implements."""

    name: str
    plugin: object
    hooks: tuple[str, ...]


class HookExecutor:
    """Registers plugins and calls their hooks; one ``async`` method per hook.

    Each hook method returns at once when no plugin implements the hook (the loop calls them on every
    turn and tool call). Implementations run in pluggy's order: last registered first, ``tryfirst`` /
    ``trylast`` honoured, wrappers around all of them. Sync implementations run on the event loop: keep
    them quick, or make them ``async def``.
    """

    def __init__(
        self, plugin_manager: pluggy.PluginManager | None = None, *, load_entrypoints: bool = False
    ) -> None:
        pm = plugin_manager if plugin_manager is not None else pluggy.PluginManager(PROJECT_NAME)
        if pm.project_name != PROJECT_NAME:
            raise ValueError(
                f"HookExecutor needs a PluginManager for project {PROJECT_NAME!r} (the project of "
                f"agcore.hooks.hookimpl), got one for {pm.project_name!r}: use "
                f"pluggy.PluginManager({PROJECT_NAME!r}), or pass none"
            )
        existing = getattr(pm.hook, "on_turn_end", None)
        if existing is None or existing.spec is None or existing.spec.namespace is not AgcoreHookSpecs:
            pm.add_hookspecs(AgcoreHookSpecs)
        self._pm: Final = pm
        # HookCallers are created once by add_hookspecs and never replaced: cache them for the fast path.
        self._callers: Final[dict[str, HookCaller]] = {name: getattr(pm.hook, name) for name in HOOK_RULES}
        if load_entrypoints:
            self.load_entrypoints()

    @property
    def plugin_manager(self) -> pluggy.PluginManager:
        """The underlying ``pluggy.PluginManager`` (for pluggy features agcore does not wrap)."""
        return self._pm

    # ---------------------------------------------------------------------------------- plugins

    def register(self, plugin: object, name: str | None = None) -> str | None:
        """Register ``plugin`` (an object or module with ``@hookimpl`` methods) and return its name;
        None if that name is blocked (pluggy's ``set_blocked``).

        Raises ``pluggy.PluginValidationError`` naming the plugin and the hook when a hook name is
        unknown, an implementation declares arguments the hook does not have, or it implements nothing.
        """
        plugin_name = name or default_plugin_name(self._pm, plugin)
        check_plugin(self._pm, plugin, plugin_name)
        try:
            return self._pm.register(plugin, name=plugin_name)
        except pluggy.PluginValidationError as exc:
            if "not a generator function" in str(exc):
                exc.add_note(
                    "an `async def` wrapper must be marked with agcore.hooks.hookimpl, which registers it "
                    "with pluggy as a generator stand-in; pluggy's own HookimplMarker accepts only "
                    "generator functions as wrappers"
                )
            raise

    def unregister(self, plugin_or_name: object) -> object:
        """Remove a plugin, given by object or by name, and return it."""
        if isinstance(plugin_or_name, str):
            removed = self._pm.unregister(name=plugin_or_name)
        elif self._pm.is_registered(plugin_or_name):
            removed = self._pm.unregister(plugin=plugin_or_name)
        else:
            removed = None
        if removed is None:
            names = [info.name for info in self.plugins()]
            raise ValueError(f"no plugin {plugin_or_name!r} is registered; registered plugins: {names}")
        return removed

    def load_entrypoints(self) -> int:
        """Load and register the plugins published in the ``agcore`` entry-point group; return how many
        were loaded. Plugins already registered (or blocked) under the entry point's name are skipped."""
        before = {name for name, _ in self._pm.list_name_plugin()}
        count = self._pm.load_setuptools_entrypoints(ENTRYPOINT_GROUP)
        for name, plugin in self._pm.list_name_plugin():
            if name in before or plugin is None:
                continue
            try:
                check_plugin(self._pm, plugin, name)
            except pluggy.PluginValidationError as exc:
                self._pm.unregister(plugin=plugin)
                exc.add_note(
                    f"loaded from the {ENTRYPOINT_GROUP!r} entry point {name!r}; it was unregistered"
                )
                raise
        return count

    def plugins(self) -> list[PluginInfo]:
        """The registered plugins, in registration order, with the hooks each implements."""
        infos = []
        for name, plugin in self._pm.list_name_plugin():
            if plugin is None:  # a blocked name
                continue
            callers = self._pm.get_hookcallers(plugin) or []
            infos.append(PluginInfo(name, plugin, tuple(sorted(caller.name for caller in callers))))
        return infos

    def has_impls(self, hook_name: str) -> bool:
        """Whether any plugin implements ``hook_name`` (the loop skips building arguments otherwise)."""
        caller = self._callers.get(hook_name)
        if caller is None:
            caller = getattr(self._pm.hook, hook_name, None)
            if caller is None:
                return False
        return bool(caller.get_hookimpls())

    # --------------------------------------------------------------------- application hooks

    def add_hookspecs(self, module_or_class: Any) -> None:
        """Declare more hooks (an application's own), called with ``call()``."""
        self._pm.add_hookspecs(module_or_class)

    async def call(self, hook_name: str, /, **kwargs: object) -> Any:
        """Call a hook added with ``add_hookspecs()``: pluggy's result (the list of non-None results, or
        the first one for a ``firstresult`` spec). An implementation that raises -> ``HookFailure``."""
        if hook_name in HOOK_RULES:
            raise ValueError(f"{hook_name!r} is an agcore hook: call HookExecutor.{hook_name}() instead")
        caller: HookCaller | None = getattr(self._pm.hook, hook_name, None)
        if caller is None or caller.spec is None:
            raise ValueError(f"no hookspec declares {hook_name!r}: add it with HookExecutor.add_hookspecs()")
        spec = caller.spec
        if spec.opts.get("historic"):
            raise ValueError(f"{hook_name!r} is historic: HookExecutor.call() does not replay calls")
        firstresult = bool(spec.opts.get("firstresult"))
        impls = caller.get_hookimpls()
        if not impls:
            return None if firstresult else []
        call_kwargs = {**spec.kwargdefaults, **kwargs} if spec.kwargdefaults else dict(kwargs)
        missing = [name for name in spec.argnames if name not in call_kwargs]
        if missing:
            raise HookCallError(f"hook {hook_name!r} must be called with argument(s) {missing}")
        fold: Fold = First() if firstresult else Collect()
        return await multicall(hook_name, impls, call_kwargs, fold, False)

    # ----------------------------------------------------------------------------- agcore hooks

    async def _dispatch(self, hook_name: str, kwargs: dict[str, object]) -> object:
        """Call an agcore hook as ``HOOK_RULES`` says: its fold combines the results, its kind picks
        the failure semantics. With no implementation, the fold's empty result (at once)."""
        rule = HOOK_RULES[hook_name]
        fold = rule.fold()
        impls = self._callers[hook_name].get_hookimpls()
        if not impls:
            return fold.value(kwargs)
        return await multicall(hook_name, impls, kwargs, fold, rule.kind == "observer")

    async def on_session_start(self, ctx: HookContext) -> None:
        """Fire ``on_session_start`` (an observer: a plugin's exception is logged, never raised)."""
        await self._dispatch("on_session_start", {"ctx": ctx})

    async def on_session_end(self, ctx: HookContext) -> None:
        """Fire ``on_session_end`` (an observer: a plugin's exception is logged, never raised)."""
        await self._dispatch("on_session_end", {"ctx": ctx})

    async def on_turn_start(self, ctx: HookContext, user_input: UserMessage) -> None:
        """Fire ``on_turn_start`` with the turn's input (an observer)."""
        await self._dispatch("on_turn_start", {"ctx": ctx, "user_input": user_input})

    async def on_turn_end(self, ctx: HookContext, message: AssistantMessage) -> bool:
        """True: go on; False: a plugin stopped the loop."""
        return cast(bool, await self._dispatch("on_turn_end", {"ctx": ctx, "message": message}))

    async def on_llm_request(self, ctx: HookContext, request: LLMRequest) -> LLMRequest:
        """The request to send: ``request`` as the plugins rewrote it (itself when none did)."""
        return cast(LLMRequest, await self._dispatch("on_llm_request", {"ctx": ctx, "request": request}))

    async def on_llm_response(self, ctx: HookContext, message: AssistantMessage) -> None:
        """Fire ``on_llm_response`` with the model's reply (an observer)."""
        await self._dispatch("on_llm_response", {"ctx": ctx, "message": message})

    async def before_tool_call(self, ctx: HookContext, call: ToolUseBlock) -> ToolCallDecision:
        """The final decision: allow, deny(reason) (the first deny), or rewrite(the final arguments)."""
        return cast(ToolCallDecision, await self._dispatch("before_tool_call", {"ctx": ctx, "call": call}))

    async def after_tool_call(
        self,
        ctx: HookContext,
        call: ToolUseBlock,
        result: ToolResultBlock,
        status: str = "ok",
        duration: float = 0.0,
    ) -> ToolResultBlock:
        """The result to record: ``result`` as the plugins rewrote it (itself when none did)."""
        kwargs: dict[str, object] = {
            "ctx": ctx, "call": call, "result": result, "status": status, "duration": duration,
        }
        return cast(ToolResultBlock, await self._dispatch("after_tool_call", kwargs))

    async def on_message(self, ctx: HookContext, message: Any) -> None:
        """Fire ``on_message`` for a message just recorded in the history (an observer)."""
        await self._dispatch("on_message", {"ctx": ctx, "message": message})

    async def on_plan_step_complete(self, ctx: HookContext, step: Any) -> None:
        """Fire ``on_plan_step_complete`` for a step that reached a final status (an observer)."""
        await self._dispatch("on_plan_step_complete", {"ctx": ctx, "step": step})

    async def on_confirmation(self, ctx: HookContext, call: ToolUseBlock, answer: ConfirmationAnswer) -> None:
        """Fire ``on_confirmation`` with the user's answer to a confirmation (an observer)."""
        await self._dispatch("on_confirmation", {"ctx": ctx, "call": call, "answer": answer})

    async def on_error(self, ctx: HookContext, error: BaseException) -> None:
        """Fire ``on_error`` (an observer: it never masks ``error``)."""
        await self._dispatch("on_error", {"ctx": ctx, "error": error})

    async def on_turn_result(self, ctx: HookContext, result: Any) -> None:
        """Fire ``on_turn_result`` with the ``TurnResult`` of a turn that ended, a cancelled one included
        (an observer)."""
        await self._dispatch("on_turn_result", {"ctx": ctx, "result": result})
