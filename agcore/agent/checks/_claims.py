"""``ClaimedChanges``: an answer that says a file was changed is held to what is on disk.

Without acceptance checks the answer is all a user has to go on, and a small model's answer often
claims work that is not there (issue 26's runs: "The bug in calc.py was fixed" after only the test
file was edited; "a test test_multiply has been added to test_mathutils.py" after that edit failed).
When the model answers, the files the answer says were written, created, added to, fixed,
updated... (``claimed_files``) are looked at: one that does not exist, or that has not changed since
the conversation began, is a claim the workspace does not bear out. The model is told which, and
asked to make the change or to answer with what was really done; after ``rounds`` such answers the
turn ends failed with ``ClaimNotBorneOut`` instead of "done".

It reads the file system, not the tool calls, so a change made by ``run_command`` (``sed -i``, a
script) counts as much as one made by ``edit_file``; and it only looks at files that exist or that
the user's request names, so "mathutils.multiply" in an answer is not taken for a file. A rename left
half done (``leftover_names``: a name a rename-like ``edit_file`` replaced, still in that file) is
the same kind of mismatch. A turn with acceptance checks is left to them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import anyio

from agcore.agent._errors import AgentError
from agcore.agent._messages import ContextNote
from agcore.agent._turn_input import turn_input
from agcore.agent.capability import CallModel, Capability, Finish, Next, Reply, TurnView
from agcore.agent.checks._leftover_names import Leftover, leftover_names
from agcore.agent.checks._review import judged

if TYPE_CHECKING:
    from agcore.tools.workspace import Workspace

__all__ = ["CLAIMS_KEY", "ClaimNotBorneOut", "ClaimedChanges", "UnbornClaim", "claimed_files"]

#: Where the capability counts the answers it questioned in the turn (``TurnState.capabilities``).
CLAIMS_KEY = "claimed_changes"

# Words that say a file's content was made or changed, in any tense.
_CHANGE_VERBS = frozenset([
    "write", "wrote", "written", "writes", "writing", "create", "created", "creates", "creating",
    "add", "added", "adds", "adding", "update", "updated", "updates", "updating", "change", "changed",
    "changes", "changing", "modify", "modified", "modifies", "edit", "edited", "edits", "editing",
    "fix", "fixed", "fixes", "fixing", "rename", "renamed", "renames", "save", "saved", "saves",
    "replace", "replaced", "replaces", "insert", "inserted", "inserts", "append", "appended",
    "appends", "put", "store", "stored", "record", "recorded", "records", "overwrite", "overwrote",
    "overwritten",
])
_NEGATIONS = frozenset(["not", "never", "no", "without", "cannot"])  # and any word ending in n't
_BE = frozenset(["is", "are", "was", "were", "been", "be", "got", "now"])
_INTO = frozenset(["into", "to", "onto"])
# A path with an extension: "calc.py", "src/app.py", "./notes.md" (not "e.g." or a version "1.5").
_PATH = re.compile(
    r"(?<![\w/.-])(?:\./)?((?:[\w-]+/)*[\w-]*[A-Za-z_][\w-]*\.[A-Za-z][A-Za-z0-9]{0,6})(?![\w/-])"
)
_WORD = re.compile(r"[\w'./-]+")
_CLAUSE_BREAK = re.compile(r"(?<=[.!?;:])\s+|\n+|,\s+|\s+(?:and|but|then|while|so)\s+", re.IGNORECASE)
_EMPTY_WANTED = re.compile(r"\b(empty|blank)\b", re.IGNORECASE)
#: A file this small or smaller is read to see whether it holds anything but whitespace.
_BLANK_BYTES = 64
#: Words between a change verb and the file it acts on ("added a test for it to test_x.py").
_ACTIVE_REACH = 10
#: Words between a file and its passive verb ("calc.py has now been fixed").
_PASSIVE_REACH = 5


@dataclass(frozen=True, slots=True)
class UnbornClaim:
    """A file the answer says was changed, and what the disk says: it is ``missing``, ``unchanged``
    since the session began, or ``empty`` (nothing but whitespace, where the task asked for no empty
    file)."""

    path: str
    found: Literal["missing", "unchanged", "empty"]

    def describe(self) -> str:
        """What the disk says, in words ("calc.py has not changed")."""
        return {"missing": f"{self.path} does not exist", "unchanged": f"{self.path} has not changed",
                "empty": f"{self.path} is empty"}[self.found]


class ClaimNotBorneOut(AgentError):
    """The model's answer does not match the workspace — files it says were changed are unchanged,
    missing or empty (``claims``), or a name its edits replaced is still there (``leftovers``) —
    still so after it was asked to make the change or correct the answer. Recoverable: another turn
    may do the work; the history stays valid."""

    recoverable: ClassVar[bool] = True

    def __init__(self, claims: list[UnbornClaim], leftovers: list[Leftover] | None = None) -> None:
        found = _mismatches(claims, leftovers or [])
        super().__init__(
            f"The model's answer does not match the workspace: {found} (asked again, it did not make "
            "the change), so the work is not done. Run the task again (a larger model does this more "
            "reliably), or give a check that verifies it (agcore run --check CMD)."
        )
        self.claims = claims
        self.leftovers = leftovers or []


class ClaimedChanges(Capability):
    """Hold an answer's "I wrote / fixed / updated FILE" to the files in ``workspace``: a file it names
    so that does not exist, or has not changed since the session began, gets the model asked to make
    the change or answer with what was done; after ``rounds`` such answers in a turn, the turn ends
    failed with ``ClaimNotBorneOut``. A sub-agent's answers are its parent's to judge, and a turn with
    acceptance checks is theirs."""

    def __init__(self, workspace: Workspace, *, rounds: int = 1) -> None:
        if rounds < 0:
            raise ValueError(f"rounds must be 0 or more, got {rounds}")
        self.workspace = workspace
        self.rounds = rounds

    def __repr__(self) -> str:
        return f"ClaimedChanges(rounds={self.rounds})"

    async def before_finish(self, steps: TurnView, reply: Reply) -> Next | None:
        if steps.session.parent is not None or steps.turn.output is not None or judged(steps):
            return None  # a turn with acceptance checks is theirs to judge, with their rounds
        root, since = self.workspace.root, steps.session.created_at
        text, task = reply.message.text, turn_input(steps)
        claims = await anyio.to_thread.run_sync(unborn_claims, text, task, root, since)
        messages = steps.session.messages[steps.turn.start:]
        leftovers = await anyio.to_thread.run_sync(leftover_names, messages, root)
        if not claims and not leftovers:
            return None
        state: dict[str, Any] = steps.turn.capabilities.setdefault(CLAIMS_KEY, {"asked": 0})
        asked = int(state.get("asked", 0))
        if asked >= self.rounds:
            return Finish("error", ClaimNotBorneOut(claims, leftovers))
        state["asked"] = asked + 1
        await steps.record(ContextNote(text=_note(claims, leftovers)))
        return CallModel()


def _note(claims: list[UnbornClaim], leftovers: list[Leftover]) -> str:
    return (
        f"Your answer does not match the workspace: {_mismatches(claims, leftovers)}. If the task needs "
        "that change, make it now with a tool call (read the file, then edit_file or write_file, with "
        "the actual content). If it does not, answer again saying only what you really did."
    )


def _mismatches(claims: list[UnbornClaim], leftovers: list[Leftover]) -> str:
    said = [f"your answer says {c.path} was written or changed, but {c.describe()}" for c in claims]
    return "; ".join(said + [left.describe() for left in leftovers])


def unborn_claims(text: str, task: str, root: Path, since: float) -> list[UnbornClaim]:
    """The files ``text`` says were changed that are missing under ``root``, unchanged since ``since``
    (epoch seconds), or empty (unless ``task`` speaks of an empty or blank file). Only files that
    exist, or that ``task`` names, are considered."""
    claims: list[UnbornClaim] = []
    named_in_task = set(_PATH.findall(task))
    empty_wanted = _EMPTY_WANTED.search(task) is not None
    for path in claimed_files(text):
        target = root / path
        try:
            inside = target.resolve().is_relative_to(root.resolve())
            info = os.stat(target) if inside and target.is_file() else None
        except (OSError, ValueError):
            continue
        if not inside:
            continue
        if info is None:
            if path in named_in_task:
                claims.append(UnbornClaim(path, "missing"))
        elif info.st_mtime < since:
            claims.append(UnbornClaim(path, "unchanged"))
        elif not empty_wanted and _blank(target, info.st_size):
            claims.append(UnbornClaim(path, "empty"))
    return claims


def _blank(path: Path, size: int) -> bool:
    if size > _BLANK_BYTES:
        return False
    try:
        return not path.read_bytes().strip()
    except OSError:
        return False


def claimed_files(text: str) -> list[str]:
    """The paths ``text`` says were written or changed, in order, once: a change verb before the path
    in its clause ("fixed calc.py", "added a test to test_x.py"; the path after "into"/"to" when there
    is one, else the first after the verb), or after it in the passive ("calc.py was fixed"), and no
    negation ("did not change test_calc.py")."""
    found: dict[str, None] = {}
    for clause in _CLAUSE_BREAK.split(text):
        said = [w.strip(".,;:!?'\"`()[]") for w in _WORD.findall(clause)]
        paths = {i: m.group(1) for i, w in enumerate(said) if (m := _PATH.fullmatch(w)) is not None}
        words = [w.lower() for w in said]
        for index, path in paths.items():
            if _acted_on(words, index, set(paths)):
                found.setdefault(path, None)
    return list(found)


def _acted_on(words: list[str], index: int, paths: set[int]) -> bool:
    into = index > 0 and words[index - 1] in _INTO
    between = False
    for i in range(index - 1, max(-1, index - 1 - _ACTIVE_REACH), -1):
        if i in paths:
            between = True
            continue
        if words[i] in _CHANGE_VERBS and not (i > 0 and words[i - 1] == "to"):  # "to fix": a purpose
            # A verb writes into the path after "into"/"to" when there is one ("wrote the count of
            # data.csv into count.txt"), else the first path after it ("fixed calc.py so test_x.py
            # passes"; "created a.txt from b.txt").
            if between and not into:
                return False
            target_later = any(p > index and words[p - 1] in _INTO for p in paths)
            return not (target_later and not into) and not _negated(words, i)
    for i in range(index + 1, min(len(words), index + 1 + _PASSIVE_REACH)):
        if i in paths:
            break
        if words[i] in _CHANGE_VERBS and i > 0 and words[i - 1] in _BE:
            return not _negated(words, i)
    return False


def _negated(words: list[str], verb: int) -> bool:
    return any(w in _NEGATIONS or w.endswith("n't") for w in words[max(0, verb - 3):verb])
