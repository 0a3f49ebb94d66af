"""A unified diff whose ``@@ -start,count +start,count @@`` counts do not match the hunk's lines,
recounted from the lines themselves.

Models write the body of a hunk well and its counts badly: issue 26's runs had a 1.5B model send
``@@ -1,3 +1,4 @@`` over a body of three old lines and three new ones, three times, each refused
("Hunk is shorter than expected"). The body says what to change; the counts only repeat it. So a
patch that does not parse as sent is parsed again with each hunk's counts taken from its body (a
blank line inside a hunk read as an empty context line, as editors strip the trailing space); where
the body still does not match the file, applying it fails as before, saying where. A body line with
no ``-``/``+``/space in front is read as context (its space lost, as a blank line's is).
"""

from __future__ import annotations

import re

__all__ = ["recount_hunks"]

_HEADER = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$")
_ENDS_HUNK = ("@@", "--- ", "+++ ", "diff ", "Index: ")


def recount_hunks(text: str) -> str:
    """``text`` with each hunk header's counts set to what its body holds."""
    lines = text.splitlines()
    out: list[str] = []
    at = 0
    while at < len(lines):
        match = _HEADER.match(lines[at])
        if match is None:
            out.append(lines[at])
            at += 1
            continue
        body: list[str] = []
        at += 1
        while at < len(lines) and not lines[at].startswith(_ENDS_HUNK):
            line = lines[at]
            body.append(line if line[:1] in ("-", "+", " ", "\\") else f" {line}")
            at += 1
        while body and body[-1] == " ":  # trailing blank lines after a hunk are no context
            body.pop()
        old = sum(1 for line in body if line[0] in " -")
        new = sum(1 for line in body if line[0] in " +")
        out.append(f"@@ -{match.group(1)},{old} +{match.group(2)},{new} @@{match.group(3)}")
        out.extend(body)
    return "\n".join(out) + "\n"
