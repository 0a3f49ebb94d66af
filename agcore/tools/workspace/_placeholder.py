"""A write whose whole content is a placeholder (``<list_dir_output>``, ``{result}``) instead of the
text it stands for: refused, saying to write the text itself.

Asked to write the names of some files into ``files.txt``, a 1.5B model listed the directory and, in
the same reply, wrote ``<list_dir_output>`` into the file: it meant "the result of that call", which
it had not seen yet. The runtime does not fill such slots in, so a file holding only one is never
what a user wanted. When the slot names one of the workspace's listing tools whose last result the
workspace kept (``list_dir``, ``glob``, ``grep``), the refusal shows that result: the model repeated
the same placeholder until the repetition guard stopped it, never copying the listing it had.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from agcore.tools._errors import ToolError

__all__ = ["refuse_placeholder"]

# One slot name in angle brackets, braces (single or double) or ${…}: words joined by _ - . or spaces.
_SLOT = r"[A-Za-z][\w.-]*(?: [\w.-]+){0,4}"
_PLACEHOLDER = re.compile(rf"\A\s*(?:<{_SLOT}>|\{{\{{?\s*{_SLOT}\s*\}}?\}}|\$\{{{_SLOT}\}})\s*\Z")


#: The most of a named tool's last result a refusal shows.
SHOWN_CHARS = 1_500


def refuse_placeholder(path: str, content: str, results: Mapping[str, str] | None = None) -> None:
    """Raise ``ToolError`` when ``content`` is nothing but a placeholder; when its slot names a tool
    whose last result ``results`` holds (``<list_dir_output>``: list_dir), that result is shown."""
    if _PLACEHOLDER.match(content) is None:
        return
    slot = content.strip().strip("<>{}$ ").lower()
    named = next((tool for tool in (results or {}) if slot.startswith(tool)), None)
    shown = ""
    if named is not None and results is not None:
        result = results[named]
        cut = result if len(result) <= SHOWN_CHARS else result[:SHOWN_CHARS] + "\n[...]"
        shown = (
            f" {named}'s last result, which the placeholder names, was:\n{cut}\nWrite the text the file "
            "should hold, taken from it, as the content itself."
        )
    raise ToolError(
        f"Nothing was written to '{path}': the content {content.strip()!r} is a placeholder, and the "
        "runtime does not fill placeholders in. Write the actual text: if it comes from another tool's "
        f"result, wait for that result, then copy what it says into the content.{shown}"
    )
