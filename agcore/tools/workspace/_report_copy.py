"""A write whose content is ``run_command``'s own report (``$ cmd``, ``exit code: 0``, ``stdout:``...)
instead of what the command printed: refused, saying what to write instead.

Asked to "run generate.py and write exactly what it prints into output.txt", a 1.5B model wrote the
tool's whole report into the file, headers and all, and said it was done. The report's shape is the
runtime's own, so a file that starts with it is a copy of the report, never output a user wanted.
"""

from __future__ import annotations

import re

from agcore.tools._errors import ToolError

__all__ = ["refuse_report_copy"]

_REPORT = re.compile(
    r"\A\$ (?P<command>[^\n]*)\n(?:exit code: -?\d+|timed out after [^\n]*)\n"
    r"(?:stdout: \(empty\)|stdout:\n(?P<stdout>.*?))(?:\nstderr:.*)?\Z",
    re.DOTALL,
)
_SHOWN = 300


def refuse_report_copy(path: str, content: str) -> None:
    """Raise ``ToolError`` when ``content`` is a ``run_command`` report."""
    match = _REPORT.match(content.strip("\n"))
    if match is None:
        return
    printed = match.group("stdout") or ""
    shown = printed if len(printed) <= _SHOWN else printed[:_SHOWN] + "…"
    what = f"the lines after 'stdout:', here {shown!r}" if printed else "nothing: it printed nothing"
    raise ToolError(
        f"Nothing was written to '{path}': the content is run_command's report of `{match.group('command')}` "
        "(its '$ …', 'exit code' and 'stdout:' lines), not what the command printed. What it printed "
        f"is {what}; write only that."
    )
