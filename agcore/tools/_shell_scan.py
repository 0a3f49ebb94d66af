"""Where a shell construct ends: ``${…}``, ``$(…)``, backticks and double quotes, nesting and quoting
counted as bash counts them, and the command substitutions found on the way (each is checked like any
other command). ``_shell_syntax`` reads words with these."""

from __future__ import annotations

import contextlib

__all__ = [
    "ShellSyntaxError", "closing_backtick", "closing_brace", "closing_paren", "skip_double_quoted",
    "skip_substitution", "substitutions_in",
]

class ShellSyntaxError(ValueError):
    """The command could not be read (an unterminated quote or substitution)."""



def closing_brace(script: str, i: int, found: list[str]) -> int:
    """Index of the ``}`` closing a ``${`` whose body starts at ``i``; every command substitution in
    the body (a default ``${x:-$(...)}``, an assigned ``${x:=`...`}``, a pattern ``${x/$(...)/}``, an
    array subscript, a nested ``${...}``) is appended to ``found``.

    Quotes nest as bash reads them (a quoted ``}`` does not close), but the substitutions inside single
    quotes are collected too: in a double-quoted ``"${x:-'$(cmd)'}"`` bash leaves the single quotes
    literal and runs ``cmd``. Finding one too many is safe; missing one is a bypass.
    """
    n = len(script)
    while i < n:
        char = script[i]
        if char == "\\":
            i += 2
        elif char == "'":
            end = script.find("'", i + 1)
            if end == -1:
                raise ShellSyntaxError("unterminated single quote in ${...}")
            found.extend(substitutions_in(script[i + 1 : end]))
            i = end + 1
        elif char == '"':
            i = skip_double_quoted(script, i + 1, found)
        elif char == "}":
            return i
        else:
            i = skip_substitution(script, i, found)
    raise ShellSyntaxError("unterminated ${...}")


def skip_double_quoted(script: str, i: int, found: list[str]) -> int:
    """Past a double-quoted part inside ``${...}`` (from after its quote), collecting substitutions."""
    n = len(script)
    while i < n:
        char = script[i]
        if char == "\\":
            i += 2
        elif char == '"':
            return i + 1
        else:
            i = skip_substitution(script, i, found)
    raise ShellSyntaxError("unterminated double quote in ${...}")


def skip_substitution(script: str, i: int, found: list[str]) -> int:
    """Past ``$(...)``, a backtick substitution or a nested ``${...}`` at ``i`` (recording the
    substitutions), or past one plain character."""
    if script.startswith("$(", i):
        end = closing_paren(script, i + 2)
        found.append(script[i + 2 : end])
        return end + 1
    if script.startswith("${", i):
        return closing_brace(script, i + 2, found) + 1
    if script[i] == "`":
        end = closing_backtick(script, i + 1)
        found.append(script[i + 1 : end])
        return end + 1
    return i + 1


def substitutions_in(text: str) -> list[str]:
    """The command substitutions in ``text`` read with its quotes as literal characters (what bash
    does with single quotes inside a double-quoted ``${...}``)."""
    found: list[str] = []
    i = 0
    with contextlib.suppress(ShellSyntaxError):  # an unterminated one in literal text runs nothing
        while i < len(text):
            i = skip_substitution(text, i, found) if text[i] != "\\" else i + 2
    return found


def closing_paren(script: str, i: int) -> int:
    """Index of the ``)`` closing a ``$(`` whose body starts at ``i`` (quotes and nesting respected)."""
    depth = 1
    n = len(script)
    while i < n:
        char = script[i]
        if char == "\\":
            i += 2
            continue
        if char == "'":
            end = script.find("'", i + 1)
            if end == -1:
                break
            i = end + 1
            continue
        if char == '"':
            i += 1
            while i < n and script[i] != '"':
                i += 2 if script[i] == "\\" else 1
            i += 1
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ShellSyntaxError("unterminated $( ... ) command substitution")


def closing_backtick(script: str, i: int) -> int:
    n = len(script)
    while i < n:
        if script[i] == "\\":
            i += 2
            continue
        if script[i] == "`":
            return i
        i += 1
    raise ShellSyntaxError("unterminated backtick command substitution")
