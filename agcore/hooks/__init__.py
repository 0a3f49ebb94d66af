"""agcore's pluggy hooks: plugins observe and steer a run.

A plugin is any object or module with methods marked ``@hookimpl``, registered with
``HookExecutor.register()`` or published in the ``agcore`` entry-point group. Implementations may be
plain functions or ``async def``, may declare any subset of a hook's arguments, and keep pluggy's
meaning of ``tryfirst``/``trylast``, ``firstresult`` and wrappers (``wrapper=True`` and old-style
``hookwrapper=True`` generators). agcore adds async-generator wrappers: an ``async def`` with one
``yield``; as an async generator cannot ``return`` a value, a ``wrapper=True`` one replaces the result
by yielding the replacement a second time (an old-style one calls ``outcome.force_result()``). Mark
them with agcore's ``hookimpl`` (pluggy's own marker only accepts generator functions as wrappers).
The executor is driven by one table, ``HOOK_RULES``: each hook's kind and how its results fold.

Every hook receives a ``HookContext`` first. Results combine, and failures are handled, per hook:

======================  ====================================  ============================================
hook                    result (combined over the plugins)    when an implementation raises
======================  ====================================  ============================================
on_session_start        None                                  observer: logged, the run goes on
on_session_end          None                                  observer: logged, the run goes on
on_turn_start           None                                  observer: logged, the run goes on
on_turn_end             bool: any False stops the loop        gatekeeper: ``HookFailure``, turn stopped
                        (every plugin still runs)
on_llm_request          the request, rewrites chained         gatekeeper: ``HookFailure``, turn stopped
on_llm_response         None                                  observer: logged, the run goes on
before_tool_call        ``ToolCallDecision``: the first deny  gatekeeper: ``HookFailure``, turn stopped
                        wins (and ends the call), rewrites
                        chain (later plugins see the new
                        arguments), else allow
after_tool_call         the result, rewrites chained (also    observer: logged, the result is kept as it
                        gets ``status``: how the call ended)  was before that plugin
on_confirmation         None                                  observer: logged, the run goes on
on_message              None                                  observer: logged, the run goes on (the
                                                              message is already in the history)
on_plan_step_complete   None                                  observer: logged, the run goes on
on_error                None                                  observer: logged, never masks the error
on_turn_result          None (gets the ``TurnResult``; runs   observer: logged, the run goes on
                        even after a cancellation)
======================  ====================================  ============================================

"Logged" means logger ``agcore.hooks``, level WARNING, with the traceback, the plugin's and the hook's
names (also as the record's ``agcore_plugin`` / ``agcore_hook`` attributes), and the next
implementation still runs. ``HookFailure(hook_name, plugin_name, error)`` is raised to the loop, which
stops the turn with ``HookBlocked``; wrappers see a gatekeeper's exception first (pluggy's meaning: it
is thrown into them, and a wrapper may handle it). An implementation returning the wrong type
(``on_llm_request`` returning a dict, say) counts as raising ``TypeError``; a wrapper returning None
keeps what the implementations produced. Cancellation (anyio's cancelled exception) always propagates,
even through a wrapper that tries to swallow it, and is never logged as a failure; other
``BaseException``s (``KeyboardInterrupt``...) are never logged nor wrapped either.
"""

from __future__ import annotations

from agcore.hooks._calling import multicall
from agcore.hooks._context import HookContext, ToolCallDecision
from agcore.hooks._errors import HookFailure
from agcore.hooks._executor import HookExecutor, PluginInfo
from agcore.hooks._folds import Fold, Ignore
from agcore.hooks._markers import ENTRYPOINT_GROUP, PROJECT_NAME, hookimpl, hookspec
from agcore.hooks._specs import (
    HOOK_KINDS,
    HOOK_RULES,
    AgcoreHookSpecs,
    ConfirmationAnswer,
    HookKind,
    HookRule,
    ToolCallStatus,
)

__all__ = [
    "ENTRYPOINT_GROUP",
    "HOOK_KINDS",
    "HOOK_RULES",
    "PROJECT_NAME",
    "AgcoreHookSpecs",
    "ConfirmationAnswer",
    "Fold",
    "HookContext",
    "HookExecutor",
    "HookFailure",
    "HookKind",
    "HookRule",
    "ToolCallStatus",
    "PluginInfo",
    "ToolCallDecision",
    "Ignore",
    "hookimpl",
    "multicall",
    "hookspec",
]
