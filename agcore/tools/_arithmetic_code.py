"""Commands hidden in text that bash evaluates as arithmetic.

Bash evaluates array subscripts inside arithmetic, and runs the command substitutions a subscript
holds, even when the text came from a quoted string: with ``x='a[$(rm -rf ~)]'``, each of
``echo $(( x ))``, ``(( x ))``, ``$[ x ]``, ``let x``, ``for ((i=x; ...))``, ``declare -i n=x``,
``${arr[x]}`` and ``[[ x -eq 0 ]]`` runs ``rm -rf ~``; so do ``let 'a[$(...)]=1'``,
``printf -v 'a[$(...)]' v`` and ``read 'a[$(...)]'``. (Executed on bash 5.2 in a scratch directory:
14 such forms ran the command; ``test``/``[`` with ``-eq`` did not.) To a reader the command is data.

So in a script that evaluates arithmetic anywhere, or uses an array subscript, every ``$(...)`` and
backtick command in its text is checked as a command, quoted or not (``hidden_commands``). Text that
names no refused command still runs (``'a[$(date)]'``); only a hidden command that would itself be
refused is.
"""

from __future__ import annotations

import re

from agcore.tools._shell_scan import substitutions_in

__all__ = ["hidden_commands"]

# Where bash evaluates arithmetic: $(( )), (( )), $[ ], let, -i declarations, [[ ... -eq ... ]], and
# any NAME[...] (an array subscript: in an assignment, a ${...}, or a name given to printf -v/read).
_ARITHMETIC = re.compile(
    r"\$\(\(|\(\(|\$\[|\blet\s|\s-(eq|ne|lt|le|gt|ge)\s"
    r"|\b(declare|typeset|local|readonly|export)\s+(-\w+\s+)*-[A-Za-z]*i"
    r"|[A-Za-z_][A-Za-z0-9_]*\["
)


_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


def hidden_commands(script: str) -> list[str]:
    """The commands in ``script``'s text, quoted ones included, when it evaluates arithmetic (see the
    module docstring); none otherwise. The unquoted ones are checked anyway: finding them again is
    harmless."""
    # Escapes read as what they escape: x="a[\$(cmd)]" and x=a\[\$\(cmd\)\] hold the same text.
    text = _ESCAPED.sub(r"\1", script)
    if "$(" not in text and "`" not in text:
        return []
    if _ARITHMETIC.search(text) is None:
        return []
    return substitutions_in(text)
