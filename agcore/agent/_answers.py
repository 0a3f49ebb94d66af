"""No "done" without an answer, as a capability: a final reply that is empty, that echoes the
runtime's own reminder back, that is only a tool call written as text (read or repaired, but not
run), or that only restates the task does not end the turn. The model is told why and asked again
once; the same again ends the turn with ``NoAnswer``. Small local models end this way often (issue
26's transcripts: 3 of 6 false successes had no tool succeed at all), and "done" was all the user
saw."""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from agcore.agent._errors import NoAnswer
from agcore.agent._messages import AssistantReply, ContextNote, ToolResults
from agcore.agent._turn_input import turn_input
from agcore.agent.capability import CallModel, Capability, Finish, Next, Reply, TurnView
from agcore.agent.textcalls import is_reminder_echo, parse_text_calls

if TYPE_CHECKING:
    from agcore.agent._batch import Batch

__all__ = [
    "ANSWER_KEY",
    "CHECKED_BY_EFFECT_KEY",
    "AnswerRequired",
    "changed_in_turn",
    "not_an_answer",
    "restated_as_done",
]

#: Where the capability counts the replies asked again in a row (``TurnState.capabilities``).
ANSWER_KEY = "answer_required"
#: Set (True) in ``TurnState.capabilities`` by a capability that judges the turn by what it did, not
#: by what the reply says (``AcceptanceChecks``, once a check failed and the model was told): a reply
#: that is no answer is left to it instead of being asked again. (A 1.5B model fixed the file a check
#: pointed at and answered with the check's note copied back; asked again, it replayed its old edits
#: until the turn ran out, with the check never run on the fix.)
CHECKED_BY_EFFECT_KEY = "checked_by_effect"
#: Replies in a row that are no answer the model is asked again about before the turn fails.
MAX_ASKS = 1


class AnswerRequired(Capability):
    """Asks again, then fails the turn, when the model's final reply is no answer (``not_an_answer``).
    A turn with a typed output settles its answer itself (``TypedOutput``)."""

    async def before_finish(self, steps: TurnView, reply: Reply) -> Next | None:
        turn = steps.turn
        if turn.output is not None or turn.capabilities.get(CHECKED_BY_EFFECT_KEY):
            return None
        notes = [m.text for m in steps.session.messages[turn.start:] if isinstance(m, ContextNote)]
        task = turn_input(steps)
        why = not_an_answer(reply.message.text, turn.offered, task=task, notes=notes)
        if why is None and restated_as_done(reply.message.text, task) and not changed_in_turn(steps):
            why = "only said the task back as done, and nothing in this turn did it"
        if why is None:
            turn.capabilities.pop(ANSWER_KEY, None)
            return None
        asked = int(turn.capabilities.get(ANSWER_KEY, 0))
        if asked >= MAX_ASKS:
            return Finish("error", NoAnswer(why))
        turn.capabilities[ANSWER_KEY] = asked + 1
        how = (" If part of it is still to do, write the tool call it needs." if turn.offered else "")
        await steps.record(ContextNote(text=(
            f"Your last reply {why}, so it does not answer the task. If the task is done, say in plain "
            f"text what you did and what came of it.{how}"
        )))
        return CallModel(why=f"the reply {why}")

    def batch_started(self, steps: TurnView, batch: Batch) -> None:
        steps.turn.capabilities.pop(ANSWER_KEY, None)  # it did something: count afresh


def not_an_answer(
    text: str, offered: frozenset[str], *, task: str = "", notes: Sequence[str] = ()
) -> str | None:
    """Why a final reply's ``text`` is no answer (``was empty``...), or None when it may be one;
    ``task``: what the user asked, which a reply that only restates it does not answer; ``notes``:
    what the runtime told the model in the turn, which a reply that only repeats it does not answer."""
    if not text.strip():
        return "was empty"
    if is_reminder_echo(text):
        return "repeated the reminder the system sends after tool results instead of answering"
    if task and restates(text, task):
        return "only restated the task"
    if any(_repeats(text, note) for note in notes):
        return "only repeated the runtime's own note back"
    if offered:
        parsed = parse_text_calls(text, offered)
        calls = parsed.calls
        rest = parsed.prose if calls else parsed.answer
        # (a reply going on with a result it made up is text of its own: the plans' verifier judges it)
        if (calls or parsed.problems) and not rest.strip() and parsed.invented is None:
            name = f" to {calls[0].name}" if calls else ""
            return f"was only a tool call{name} written as text, which was not run"
    return None


#: A reply this long or longer (in words) whose words are nearly all the task's, in the task's order,
#: restates it. Shorter replies ("count.txt holds 37") share words with any task by nature.
RESTATED_MIN_WORDS = 6
RESTATED_SHARE = 0.9
#: ... and that opens with this many of the task's words in a row.
RESTATED_OPENING = 3
_WORD = re.compile(r"\w+")
#: A reply whose longest run of words found word for word in a note of the runtime's is this many
#: words or more, and this share of the reply, repeats the note.
REPEATED_MIN_WORDS = 8
REPEATED_SHARE = 0.75


def _repeats(text: str, note: str) -> bool:
    """Whether ``text`` is mostly a piece of ``note`` (a failing check's request, a claims note)
    copied back: a 1.5B model answered with the last sentences of the checks' note three rounds in a
    row, once after "The task is now done."."""
    said = _WORD.findall(text.lower())
    if len(said) < REPEATED_MIN_WORDS:
        return False
    told = _WORD.findall(note.lower())
    run = SequenceMatcher(None, told, said, autojunk=False).find_longest_match(0, len(told), 0, len(said))
    return run.size >= REPEATED_MIN_WORDS and run.size >= REPEATED_SHARE * len(said)


def restates(text: str, task: str) -> bool:
    """Whether ``text`` is ``task`` said again: it opens with three of the task's words in a row, and
    at least 90% of its words (six or more) are the task's, word for word and in order. An answer in
    the task's own terms still differs in its verbs ("Renamed ... and updated ..." for "Rename ... and
    update ...", "I wrote the names ..." for "Write the names ...") and in what it adds; a small model
    that restates the task after a refused call (issue 26's run-command) writes it back as is."""
    said = _WORD.findall(text.lower())
    if len(said) < RESTATED_MIN_WORDS:
        return False
    asked = _WORD.findall(task.lower())
    if not _may_restate(said, asked):
        return False
    blocks = SequenceMatcher(None, asked, said, autojunk=False).get_matching_blocks()
    # It opens with the task's own words ("Write the names…", not "I wrote the names…": an answer).
    opens_alike = any(block.b == 0 and block.size >= RESTATED_OPENING for block in blocks)
    return opens_alike and sum(block.size for block in blocks) >= RESTATED_SHARE * len(said)


#: Words a reply that says the task back as done opens with before the task's own ("I have ...").
_SAYER = frozenset({"i", "we", "have", "ve", "just", "now", "already", "successfully"})
#: Words shorter than this are compared whole; longer ones by this many first letters, so that
#: "explained" is "explain" and "configures" is "configure" (a past tense, a plural).
_STEM = 5


def restated_as_done(text: str, task: str) -> bool:
    """Whether ``text`` is ``task`` said back as done, in other tenses: "I read settings.py and
    explained in two sentences what it configures, including the release codename." for "Read
    settings.py and explain in two sentences what it configures, including the release codename."
    After a leading "I", "we", "have" and the like, it opens with three of the task's words in a row,
    and at least 90% of its words (six or more) are the task's, compared by their first five letters,
    in order. Such a reply is a fine summary after work that changed something, and no answer at all
    when nothing did (``AnswerRequired`` asks which): a 1.5B model answered a question this way, and
    the review took it for done."""
    said = [w[:_STEM] for w in _WORD.findall(text.lower())]
    while said and said[0] in _SAYER:
        said = said[1:]
    if len(said) < RESTATED_MIN_WORDS:
        return False
    asked = [w[:_STEM] for w in _WORD.findall(task.lower())]
    known = set(asked)
    if sum(word in known for word in said) < RESTATED_SHARE * len(said):
        return False  # cheap first: most replies share far fewer words with their task
    blocks = SequenceMatcher(None, asked, said, autojunk=False).get_matching_blocks()
    opens_alike = any(block.b == 0 and block.size >= RESTATED_OPENING for block in blocks)
    return opens_alike and sum(block.size for block in blocks) >= RESTATED_SHARE * len(said)


def changed_in_turn(steps: TurnView) -> bool:
    """Whether a call of the running turn to a tool that is not read-only (or unknown) succeeded."""
    messages = steps.session.messages[steps.turn.start :]
    names = {c.id: c.name for m in messages if isinstance(m, AssistantReply) for c in m.tool_calls}
    registry = steps.session.bundle.tool_registry()
    for message in messages:
        if not isinstance(message, ToolResults):
            continue
        for result in message.results:
            tool = registry.get(names.get(result.tool_use_id, ""))
            if not result.is_error and (tool is None or not tool.read_only):
                return True
    return False


def _may_restate(said: list[str], asked: list[str]) -> bool:
    """What ``restates`` needs, checked cheaply first (every final answer is read; the matcher costs
    ~30 µs): the reply's first words occur in the task in a row, and enough of its words are the
    task's at all. False means ``restates`` is False; True, that the matcher must tell."""
    opening = said[:RESTATED_OPENING]
    if not any(asked[i : i + RESTATED_OPENING] == opening for i in range(len(asked) - RESTATED_OPENING + 1)):
        return False
    known = set(asked)
    return sum(word in known for word in said) >= RESTATED_SHARE * len(said)
