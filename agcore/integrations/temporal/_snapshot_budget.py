"""What a continue-as-new carries of a long session: its newest whole turns, within a byte budget.

A workflow's input (and result) is one Temporal payload, refused over 2 MB (the server's blob-size
limit: the continue-as-new fails and the session with it). A session's snapshot holds every message,
so without a bound a long enough session could not go on (about 1,150 weather turns). Over
``max_snapshot_bytes`` the snapshot carries its newest turns that fit, cut only where a turn begins
(a ``UserInput`` with every earlier tool call answered, so no call is parted from its result), and a
``SystemEvent`` in front says how many earlier messages were left behind and where they are: each
turn's messages are in the result of its Update, and earlier carried ones in the input of the run
that carried them, in the workflow's history. The model never sees that event.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import TypeAdapter

from agcore.agent import AgentMessage, AssistantReply, SystemEvent, ToolResults, UserInput

__all__ = ["OMITTED_KEY", "carried_messages"]

#: The ``SystemEvent.data`` key holding how many messages earlier runs left behind, in all.
OMITTED_KEY = "agcore.omitted_messages"
#: Room kept in the budget for the note itself.
_NOTE_ROOM = 600

_MESSAGE: TypeAdapter[AgentMessage] = TypeAdapter(AgentMessage)


def carried_messages(messages: Sequence[str], budget: int | None, *, workflow_id: str) -> list[str]:
    """``messages`` (JSON texts, oldest first) as a continue-as-new carries them: all of them when
    they fit in ``budget`` bytes (or ``budget`` is None), else a note and the newest whole turns that
    fit (at least the last turn, whatever its size)."""
    if budget is None or sum(len(text) for text in messages) <= budget:
        return list(messages)
    parsed = [_MESSAGE.validate_json(text) for text in messages]
    starts = _turn_starts(parsed)
    tail = 0
    cut = starts[-1] if starts else 0
    sizes = [len(text) for text in messages]
    for start in reversed(starts):  # the earliest start whose tail still fits
        tail = sum(sizes[start:])
        if tail > budget - _NOTE_ROOM:
            break
        cut = start
    earlier = _already_omitted(parsed[0]) if parsed else 0
    own = 1 if earlier else 0  # an earlier note is replaced, not counted as a message
    if cut <= own:
        return list(messages)
    omitted = earlier + cut - own
    note = SystemEvent(
        text=(f"{omitted} earlier messages of this session were not carried into this run: its snapshot "
              f"was over max_snapshot_bytes ({budget}). They are in workflow {workflow_id!r}'s earlier "
              "runs (each turn's messages in its Update's result); raise max_snapshot_bytes with a "
              "payload store (--payload-store) to carry them all."),
        data={OMITTED_KEY: omitted, "first_carried": parsed[cut].id},
    )
    return [note.model_dump_json(), *messages[cut:]]


def _turn_starts(messages: Sequence[AgentMessage]) -> list[int]:
    """The indices where a turn begins: a user's input with every earlier tool call answered."""
    starts: list[int] = []
    open_calls: set[str] = set()
    for i, message in enumerate(messages):
        if isinstance(message, UserInput) and not open_calls:
            starts.append(i)
        if isinstance(message, AssistantReply):
            open_calls.update(call.id for call in message.tool_calls)
        elif isinstance(message, ToolResults):
            open_calls.difference_update(result.tool_use_id for result in message.results)
    return starts


def _already_omitted(first: AgentMessage) -> int:
    if isinstance(first, SystemEvent) and isinstance(first.data.get(OMITTED_KEY), int):
        return int(first.data[OMITTED_KEY])
    return 0
