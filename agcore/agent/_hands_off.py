"""The user's "do not change FILE", kept by the runtime, as a capability.

A request that says "Fix the bug in calc.py (do not change test_calc.py)" names a file the work must
leave alone. Small models edit it anyway — issue 26's runs: a 1.5B model made the failing test pass
by changing the test, in every run, checked or not, and a check that guards the file only told it
afterwards. Here the turn's request is read for such files (``hands_off_files``: "do not / don't /
never / must not change|modify|edit|touch|overwrite FILE", "without changing FILE", "leave FILE
unchanged|untouched|alone"), and a call of a tool that is not read-only aimed at one of them (its
``path`` argument, or a patch's ``---``/``+++`` header) is refused before it runs, saying that the
user asked to leave the file alone and to change another one. ``run_command`` is not read (a shell
command's targets are its own business: the command guard and the sandbox judge those).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from agcore.agent._batch import error_result
from agcore.agent._turn_input import turn_input
from agcore.agent.capability import Capability, TurnView, Vetting

if TYPE_CHECKING:
    from agcore.agent._batch import Batch
    from agcore.llm.types import ToolUseBlock, UserMessage

__all__ = ["HANDS_OFF_KEY", "HandsOff", "hands_off_files"]

#: Where the capability keeps the turn's files to leave alone (``TurnState.capabilities``).
HANDS_OFF_KEY = "hands_off"

_FILE = r"[`'\"]?(?:\./)?(?P<path>(?:[\w.-]+/)*[\w-]*[A-Za-z_][\w-]*\.[A-Za-z][A-Za-z0-9]{0,6})[`'\"]?"
_VERB = r"(?:change|modify|edit|touch|alter|overwrite|rewrite|update|write to)"
_INSTRUCTIONS = (
    re.compile(rf"\b(?:do not|don't|never|must not|should not|shouldn't|may not|cannot|can't)\s+{_VERB}\s+"
               rf"(?:the file\s+|file\s+)?{_FILE}", re.IGNORECASE),
    re.compile(rf"\bwithout\s+(?:changing|modifying|editing|touching|altering)\s+(?:the file\s+)?{_FILE}",
               re.IGNORECASE),
    re.compile(rf"\bleave\s+(?:the file\s+)?{_FILE}\s+(?:unchanged|untouched|alone|as it is)", re.IGNORECASE),
)
_PATCH_HEADER = re.compile(r"^(?:---|\+\+\+)\s+(?:[ab]/)?(\S+)", re.MULTILINE)


def hands_off_files(text: str) -> list[str]:
    """The files ``text`` says not to change, in order, once."""
    found: dict[str, None] = {}
    for pattern in _INSTRUCTIONS:
        for match in pattern.finditer(text):
            found.setdefault(match.group("path"), None)
    return list(found)


class HandsOff(Capability):
    """Refuse a changing tool call aimed at a file the turn's request says not to change."""

    async def start_turn(self, steps: TurnView, message: UserMessage) -> None:
        files = hands_off_files(turn_input(steps))
        if files:
            steps.turn.capabilities[HANDS_OFF_KEY] = files

    def vet_call(self, steps: TurnView, batch: Batch, call: ToolUseBlock) -> Vetting | None:
        kept = steps.turn.capabilities.get(HANDS_OFF_KEY)
        if not kept:
            return None
        tool = steps.session.bundle.tool_registry().get(call.name)
        if tool is None or tool.read_only:
            return None
        hit = next((p for p in _targets(call.input) if _normal(p) in {_normal(k) for k in kept}), None)
        if hit is None:
            return None
        batch.answer(call, error_result(call.id, (
            f"Not run: the user asked not to change {hit}, so {call.name} may not change it. Leave {hit} as "
            "it is and make the change in another file (the one the task asks you to fix or change)."
        )), "denied")
        return Vetting("answered", call)


def _targets(arguments: dict[str, Any]) -> list[str]:
    paths = [v for k, v in arguments.items() if isinstance(v, str) and k in ("path", "file", "file_path")]
    patch = arguments.get("patch")
    if isinstance(patch, str):
        paths += [p for p in _PATCH_HEADER.findall(patch) if p != "/dev/null"]
    return paths


def _normal(path: str) -> str:
    return path.strip().removeprefix("./")
