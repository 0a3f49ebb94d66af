"""A write whose whole content is a placeholder (``<list_dir_output>``, ``{result}``) instead of the
text it stands for: refused, saying to write the text itself.

Asked to write the names of some files into ``files.txt``, a 1.5B model listed the directory and, in
the same reply, wrote ``<list_dir_output>`` into the file: it meant "the result of that call", which
it had not seen yet. The runtime does not fill such slots in, so a file holding only one is never
what a user wanted.
"""

from __future__ import annotations

import re

from agcore.tools._errors import ToolError

__all__ = ["refuse_placeholder"]

# One slot name in angle brackets, braces (single or double) or ${…}: words joined by _ - . or spaces.
_SLOT = r"[A-Za-z][\w.-]*(?: [\w.-]+){0,4}"
_PLACEHOLDER = re.compile(rf"\A\s*(?:<{_SLOT}>|\{{\{{?\s*{_SLOT}\s*\}}?\}}|\$\{{{_SLOT}\}})\s*\Z")


def refuse_placeholder(path: str, content: str) -> None:
    """Raise ``ToolError`` when ``content`` is nothing but a placeholder."""
    if _PLACEHOLDER.match(content) is None:
        return
    raise ToolError(
        f"Nothing was written to '{path}': the content {content.strip()!r} is a placeholder, and the "
        "runtime does not fill placeholders in. Write the actual text: if it comes from another tool's "
        "result, wait for that result, then copy what it says into the content."
    )
