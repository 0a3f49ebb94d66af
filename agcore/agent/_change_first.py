"""``ChangeFirst`` (built in): after a failing check asked for a change, the next reply must be a
call that can make one.

Issue 26's runs: a 1.5B model handed a failing check's output, the files involved (shown, numbered)
and "change the files so that the check passes, not read them again" re-read the test it had read
already and answered, in every round and every run. On a server that constrains the reply shape
(``ConstrainedCalls``: llama.cpp, vLLM, Ollama) the reply right after such a request (a failing
check's note, or "nothing has changed since the check failed") may only call a tool that is not
read-only (``Tool.read_only``: ``edit_file``, ``write_file``, ``apply_patch``, ``run_command``…); with
native tools the request offers those tools alone and asks for a call (``tool_choice: any``). Only
that one reply: the model then has all its tools and its answer back, and the checks judge the
answer as before. A turn without checks, or one whose request was not a change request, is left as
it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agcore.agent.capability import Capability, ModelCall, TurnView
from agcore.agent.textcalls import calls_format, is_constrained
from agcore.llm import ToolChoice

if TYPE_CHECKING:
    from agcore.llm.types import ToolDefinition

__all__ = ["CHANGE_DUE_KEY", "ChangeFirst"]

#: Set (True) in ``TurnState.capabilities`` by a capability whose note asks the model for a change
#: (``AcceptanceChecks`` after a failing check); ``ChangeFirst`` acts on it once, in the next call.
CHANGE_DUE_KEY = "change_due"


class ChangeFirst(Capability):
    """The reply after a failing check's request for a change may only call a tool that can change
    something (not ``read_only``)."""

    def encode_request(self, steps: TurnView, call: ModelCall) -> None:
        if not steps.turn.capabilities.pop(CHANGE_DUE_KEY, False) or not call.offered:
            return
        changing = _changing_tools(steps, call.offered)
        if not changing:
            return  # nothing offered could make a change: the note alone asks for it
        if is_constrained(call.request):  # text mode: the tools are in the prompt, the shape names them
            call.request = call.request.model_copy(update={"response_format": calls_format(changing)})
        elif call.tool_mode != "text" and call.request.tools:
            call.request = call.request.model_copy(
                update={"tools": changing, "tool_choice": ToolChoice(mode="any")}
            )
            call.offered = frozenset(t.name for t in changing)


def _changing_tools(steps: TurnView, offered: frozenset[str]) -> list[ToolDefinition]:
    """The offered tools that are not read-only, by name."""
    registry = steps.session.bundle.tool_registry()
    changing = []
    for name in sorted(offered):
        tool = registry.get(name)
        if tool is not None and not tool.read_only:
            changing.append(tool.definition())
    return changing
