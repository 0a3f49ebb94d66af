"""Telling a line of code (or of a file's contents) from a step's description.

Models asked for a plan sometimes spread the code a step should write over several items of the step
list, one line per item. ``code_line`` recognises such a line by its shape (indentation, a keyword
that opens a statement, an assignment, a call, a closing bracket, a comment, a tag, a fence), so the
parser can join those items back to the step that introduces them rather than run each as a step.
The rules lean towards "not code": a command such as ``pip install -r requirements.txt`` or a
sentence like "If the tests fail, fix them" stays a step.
"""

from __future__ import annotations

import re

__all__ = ["code_line", "join_code_lines"]

_CODE_PATTERNS = tuple(re.compile(p) for p in (
    r"^(?:\t| {2,})\S",  # indented: the body of a block
    r"^(?:async\s+)?def\s+\w+\s*\(",
    r"^class\s+\w+\s*[(:]",
    r"^import\s+[\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*;?$",
    r"^from\s+[\w.]+\s+import\s",
    r"^(?:return|yield|raise|await)(?:\s*$|\s+[\w.]+\s*[(\[.]|\s+[\w.'\"]+$)",  # not "return the sum"
    r"^(?:pass|break|continue)$",
    r"^(?:if|elif|for|while|with|else|try|except|finally)\b.*:$",  # a Python block opener
    r"^(?:const|let|var)\s+\w+\s*=",
    r"^(?:function|func|fn)\s+\w*\s*\(",
    r"^export\s+(?:default|const|function|class)\b",
    r"^(?:package|use)\s+[\w:.]+;?$",
    r"^#(?:include|define|pragma|!)",
    r"^@\w[\w.]*(?:\(.*\))?$",  # a decorator
    r"^[A-Za-z_][\w.\[\]'\"]*\s*(?:=|\+=|-=|\*=|/=|:=)\s*\S",  # an assignment
    r"^[A-Za-z_][\w.]*\(.*\)\s*;?$",  # a bare call: print('hi'), main()
    r"^[}\])]+[;,)]*$",  # closing brackets
    r"[;{]$",  # a C-like statement or block opener
    r"^(?:#|//|/\*|\*/|--)",  # a comment (or a markdown heading: file contents either way)
    r"^</?[a-zA-Z][\w-]*(?:\s[^>]*)?/?>",  # a markup tag
    r"^(?:```|~~~)",  # a fence line
))


def code_line(text: str) -> bool:
    """Whether ``text`` (one item of a step list) reads as a line of code or file contents rather than
    a step; a blank item counts (a blank line of the code)."""
    if "\n" in text.strip():
        return False  # a multi-line item is a whole step (code and all), not a line of one
    if not text.strip():
        return True
    line = text.rstrip()
    return any(p.search(line) for p in _CODE_PATTERNS)


def join_code_lines(lines: list[str]) -> str:
    """``lines`` as one fenced block (their own fence lines are dropped, blank edges trimmed)."""
    body = [line.rstrip() for line in lines if not line.strip().startswith(("```", "~~~"))]
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()
    return "```\n" + "\n".join(body) + "\n```"
