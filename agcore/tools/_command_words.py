"""How ``CommandGuard`` reads the words of one simple command: what it shows in a refusal, which
operands are program text rather than paths, its allow/deny entries, and the variables it refuses
to see set (``CDPATH``)."""

from __future__ import annotations

import shlex
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

from agcore.tools._code_carriers import one_liner
from agcore.tools._command_denied import deny, program_name
from agcore.tools._command_rules import unwrap
from agcore.tools._shell_syntax import SimpleCommand, Word

__all__ = ["check_cdpath", "entry_matches", "not_code", "parse_entry", "shown_text"]


def check_cdpath(name: str, shown: str) -> None:
    if name == "CDPATH":
        deny(
            shown,
            "CDPATH makes 'cd DIR' go to directories the guard cannot follow; leave CDPATH unset and "
            "give directories as paths",
        )


def shown_text(simple: SimpleCommand) -> str:
    text = " ".join(w.text for w in simple.words)
    for operator, target in simple.redirects:
        text += f" {operator} {target.text}"
    return text if len(text) <= 200 else text[:197] + "..."


def not_code(words: list[Word]) -> list[Word]:
    """The operands, without program text (``sh -c TEXT``, ``python3 -c TEXT``): that is checked as
    a script, or needs confirmation, rather than read as a path."""
    argv = tuple(w.text for w in words)
    wrapped = unwrap(argv)
    code = set(wrapped[1]) if wrapped is not None and wrapped[0] == "script" else set()
    inline = one_liner(argv)
    if inline is not None:
        code.add(inline)
    return [w for w in words[1:] if w.text not in code]


def parse_entry(entry: str) -> tuple[str, ...]:
    parts = tuple(shlex.split(entry))
    if not parts:
        raise ValueError("allow/deny entries must name a program, e.g. 'pytest' or 'git status'")
    return parts


def entry_matches(entry: tuple[str, ...], argv: tuple[str, ...]) -> bool:
    if len(argv) < len(entry) or not fnmatchcase(program_name(argv), PurePosixPath(entry[0]).name):
        return False
    return all(fnmatchcase(a, e) for a, e in zip(argv[1 : len(entry)], entry[1:], strict=True))
