"""A small POSIX-shell reader: command strings -> simple commands, operators and substitutions.

Both ``CommandGuard`` (which must see every sub-command a shell would run) and the workspace's
``run_command`` (which runs a safe subset itself, without a shell) read commands through it.

Why not ``shlex`` alone: ``shlex.split`` drops the difference between an operator and a quoted word
(``echo "|"`` and ``echo | x`` give the same tokens), hides command substitution inside double quotes
(``"$(rm -rf /)"`` becomes one plain word) and cannot say whether a ``*`` was quoted. This reader
follows the same quoting rules (it agrees with ``shlex.split`` on operator-free input, a property the
tests check) and keeps that information. Bash's ANSI-C quoting (``$'\x72m'`` is ``rm``) is decoded and
``$"..."`` read as a double-quoted string, as bash does; words bash would brace-expand (``{a,b}``,
``{1..3}``) are marked, since their text is not what runs. It does not expand anything else.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from agcore.tools._shell_scan import ShellSyntaxError, closing_backtick, closing_brace, closing_paren

__all__ = [
    "CONTROL_OPERATORS",
    "REDIRECT_OPERATORS",
    "SUBSTITUTION_MARK",
    "ParsedScript",
    "ShellSyntaxError",
    "SimpleCommand",
    "Word",
    "parse_script",
]

# Longest first: the reader takes the longest operator that matches.
_OPERATORS = (
    "&>>", "<<<", "<<-", "&&", "||", ";;", ">>", ">&", "<&", "&>", ">|", "|&", "<<", "<>",
    ";", "&", "|", ">", "<", "(", ")", "\n",
)  # fmt: skip
_OPERATOR_CHARS = frozenset(";&|<>()\n")
CONTROL_OPERATORS = frozenset({";", "&&", "||", ";;", "|", "|&", "&", "\n", "(", ")"})
REDIRECT_OPERATORS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<", "<<", "<<<", "<<-", "<>", "<&"})
SUBSTITUTION_MARK = "$(…)"  # stands in a word where a substitution was
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# What an assignment assigns to: a NAME, or an array element NAME[subscript] (``a[1]=x``, ``a[i+1]=x``).
_TARGET = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?")
# ${x@P} expands the value like a prompt string, which runs the $(...) the value holds.
_PROMPT_OPERATOR = re.compile(r"@P$")



@dataclass(frozen=True, slots=True)
class Word:
    """One shell word after quote removal.

    ``glob``: an unquoted ``*``, ``?`` or ``[`` (the shell would expand it). ``expansion``: a ``$NAME``
    or ``${...}`` outside single quotes. ``substitutions``: indexes into ``ParsedScript.substitutions``
    of the ``$(...)``/backtick/``<(...)`` parts, each replaced by ``SUBSTITUTION_MARK`` in ``text``.
    ``brace``: an unquoted ``{x,y}`` or ``{a..b}`` (bash turns it into several words).
    ``assignment``: the word starts with an unquoted ``NAME=`` or ``NAME[subscript]=`` (``FOO='a b'``
    and ``a[1]=x`` are, ``'FOO'=1`` is not).
    ``runs_value``: a ``${NAME@P}`` expansion, which runs the command substitutions in the variable's
    value (code the reader cannot see).
    """

    text: str
    quoted: bool = False
    glob: bool = False
    expansion: bool = False
    substitutions: tuple[int, ...] = ()
    brace: bool = False
    assignment: bool = False
    runs_value: bool = False

    @property
    def dynamic(self) -> bool:
        """The shell would compute this word at run time (variables, substitutions, brace expansion)."""
        return self.expansion or self.brace or bool(self.substitutions)


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """Words and redirections between two control operators; ``joiner`` is the operator before it."""

    words: tuple[Word, ...]
    redirects: tuple[tuple[str, Word], ...] = ()
    joiner: str = ""

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(w.text for w in self.words)


@dataclass(frozen=True, slots=True)
class ParsedScript:
    commands: tuple[SimpleCommand, ...]
    substitutions: tuple[str, ...] = ()  # the inner scripts, to be checked as commands themselves
    operators: frozenset[str] = field(default_factory=frozenset)  # every operator seen


@dataclass(slots=True)
class _WordBuilder:
    chars: list[str] = field(default_factory=list)
    started: bool = False
    quoted: bool = False
    glob: bool = False
    expansion: bool = False
    substitutions: list[int] = field(default_factory=list)
    brace: bool = False
    assignment: bool = False
    runs_value: bool = False

    def build(self) -> Word:
        return Word(
            "".join(self.chars), self.quoted, self.glob, self.expansion, tuple(self.substitutions),
            self.brace, self.assignment, self.runs_value,
        )


def parse_script(script: str) -> ParsedScript:
    """Read a command string into simple commands joined by operators. Raises ``ShellSyntaxError``."""
    tokens, substitutions = _tokenize(script)
    commands: list[SimpleCommand] = []
    operators: set[str] = set()
    words: list[Word] = []
    redirects: list[tuple[str, Word]] = []
    joiner = ""
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if isinstance(token, Word):
            words.append(token)
        elif _redirect_base(token) in REDIRECT_OPERATORS:
            operators.add(token)
            target = tokens[i + 1] if i + 1 < len(tokens) else None
            if not isinstance(target, Word):
                raise ShellSyntaxError(f"redirection '{token}' has no target")
            redirects.append((token, target))
            i += 1
        else:
            operators.add(token)
            if words or redirects:
                commands.append(SimpleCommand(tuple(words), tuple(redirects), joiner))
            words, redirects = [], []
            joiner = token
        i += 1
    if words or redirects:
        commands.append(SimpleCommand(tuple(words), tuple(redirects), joiner))
    return ParsedScript(tuple(commands), tuple(substitutions), frozenset(operators))


def _redirect_base(token: str) -> str:
    """``2>>`` -> ``>>``: the operator without its file-descriptor number."""
    return token.lstrip("0123456789")


def _tokenize(script: str) -> tuple[list[Word | str], list[str]]:
    tokens: list[Word | str] = []
    substitutions: list[str] = []
    word = _WordBuilder()
    i, n = 0, len(script)

    def flush() -> None:
        nonlocal word
        if word.started:
            tokens.append(word.build())
        word = _WordBuilder()

    def substitute(inner: str) -> None:
        word.started = True
        word.chars.append(SUBSTITUTION_MARK)
        word.substitutions.append(len(substitutions))
        substitutions.append(inner)

    while i < n:
        char = script[i]
        if char == "'":
            end = script.find("'", i + 1)
            if end == -1:
                raise ShellSyntaxError("unterminated single quote")
            word.chars.append(script[i + 1 : end])
            word.started = word.quoted = True
            i = end + 1
        elif char == '"':
            i = _double_quoted(script, i + 1, word, substitute)
        elif char == "\\":
            if i + 1 >= n:
                raise ShellSyntaxError("a lone backslash ends the command (nothing to escape)")
            if script[i + 1] != "\n":
                word.chars.append(script[i + 1])
                word.started = word.quoted = True
            i += 2  # an escaped newline is a line continuation: it vanishes
        elif char in " \t\r":
            flush()
            i += 1
        elif char == "#" and not word.started:
            while i < n and script[i] != "\n":
                i += 1
        elif char in "<>" and i + 1 < n and script[i + 1] == "(":
            end = closing_paren(script, i + 2)
            substitute(script[i + 2 : end])
            i = end + 1
        elif char in _OPERATOR_CHARS:
            fd = ""
            if word.started and not word.quoted and "".join(word.chars).isdigit() and char in "<>":
                fd = "".join(word.chars)  # "2>" : the number belongs to the redirection
                word = _WordBuilder()
            flush()
            operator = next(op for op in _OPERATORS if script.startswith(op, i))
            tokens.append(fd + operator)
            i += len(operator)
        elif char == "$" and script.startswith("$'", i):
            i = _ansi_c_quoted(script, i + 2, word)
        elif char == "$" and script.startswith('$"', i):
            i = _double_quoted(script, i + 2, word, substitute)  # locale translation: the same text
        elif char == "$":
            i = _dollar(script, i, word, substitute)
        elif char == "`":
            end = closing_backtick(script, i + 1)
            substitute(script[i + 1 : end])
            i = end + 1
        else:
            if char in "*?[":
                word.glob = True
            if char == "{" and _brace_expands(script, i):
                word.brace = True
            if char == "=" and not (word.quoted or word.assignment) and _assigns_to(word.chars):
                word.assignment = True
            if char == "~" and not word.started and i + 1 < n and script[i + 1] in "+-":
                word.expansion = True  # ~+ is $PWD, ~- is $OLDPWD: computed when it runs
            word.chars.append(char)
            word.started = True
            i += 1
    flush()
    return tokens, substitutions


def _assigns_to(chars: list[str]) -> bool:
    """Whether the word so far names what an ``=`` next would assign to (``NAME``, ``NAME[i]``)."""
    return _TARGET.fullmatch("".join(chars)) is not None


def _double_quoted(script: str, i: int, word: _WordBuilder, substitute: Callable[[str], None]) -> int:
    """Read a double-quoted part starting after its opening quote; returns the index after it."""
    word.started = word.quoted = True
    n = len(script)
    while i < n:
        char = script[i]
        if char == '"':
            return i + 1
        if char == "\\" and i + 1 < n and script[i + 1] in '$`"\\\n':
            if script[i + 1] != "\n":
                word.chars.append(script[i + 1])
            i += 2
        elif char == "$":
            i = _dollar(script, i, word, substitute)
        elif char == "`":
            end = closing_backtick(script, i + 1)
            substitute(script[i + 1 : end])
            i = end + 1
        else:
            word.chars.append(char)
            i += 1
    raise ShellSyntaxError("unterminated double quote")


_ANSI_C_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
    "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip


def _ansi_c_quoted(script: str, i: int, word: _WordBuilder) -> int:
    """Read ``$'...'`` from after its opening quote, decoding escapes as bash does; returns the index
    after the closing quote. ``$'\x72m'`` is the word ``rm``."""
    word.started = word.quoted = True
    n = len(script)
    while i < n:
        char = script[i]
        if char == "'":
            return i + 1
        if char != "\\" or i + 1 >= n:
            word.chars.append(char)
            i += 1
            continue
        code = script[i + 1]
        i += 2
        if code in _ANSI_C_ESCAPES:
            word.chars.append(_ANSI_C_ESCAPES[code])
        elif code in "01234567":
            digits = _take(script, i - 1, "01234567", 3)
            word.chars.append(chr(int(digits, 8) & 0xFF))
            i += len(digits) - 1
        elif code in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[code]
            digits = _take(script, i, "0123456789abcdefABCDEF", width)
            if not digits:
                word.chars.append("\\" + code)
                continue
            value = int(digits, 16)
            word.chars.append(chr(value) if value <= 0x10FFFF else "\ufffd")
            i += len(digits)
        elif code == "c" and i < n:
            word.chars.append(chr(ord(script[i]) & 0x1F))
            i += 1
        else:
            word.chars.append("\\" + code)  # bash keeps an unknown escape as written
    raise ShellSyntaxError("unterminated $'...' quote")


def _take(script: str, i: int, allowed: str, limit: int) -> str:
    end = i
    while end < len(script) and end - i < limit and script[end] in allowed:
        end += 1
    return script[i:end]


def _brace_expands(script: str, i: int) -> bool:
    """Whether the unquoted ``{`` at ``i`` opens a brace expansion (``{a,b}``, ``{1..3}``)."""
    depth = 0
    for j in range(i, len(script)):
        char = script[j]
        if char in " \t\n;&|<>()'\"\\$`":
            return False
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                body = script[i + 1 : j]
                return "," in body or ".." in body
        elif char == "," and depth == 1:
            return True
    return False


def _dollar(script: str, i: int, word: _WordBuilder, substitute: Callable[[str], None]) -> int:
    """``$(...)``, ``$((...))``, ``${...}``, ``$NAME``, ``$1``..., or a lone ``$``."""
    word.started = True
    nxt = script[i + 1] if i + 1 < len(script) else ""
    if nxt == "(":
        end = closing_paren(script, i + 2)
        substitute(script[i + 2 : end])
        return end + 1
    if nxt == "{":
        inner: list[str] = []
        end = closing_brace(script, i + 2, inner)
        word.expansion = True
        word.chars.append(script[i : end + 1])
        word.runs_value = word.runs_value or bool(_PROMPT_OPERATOR.search(script[i + 2 : end]))
        for substitution in inner:
            substitute(substitution)
        return end + 1
    if nxt.isalnum() or nxt in "_@*#?$!-":
        word.expansion = True
    word.chars.append("$")
    return i + 1
