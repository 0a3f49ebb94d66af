"""A seeded generator of shell lines full of command substitutions, for cross-checking the shell
reader against real parsers (tree-sitter-bash, bash itself).

Every command substitution runs ``touch mN`` with a unique N (sometimes more around it), and nothing
else does, so which substitutions a parser found is the set of markers it found in ``touch`` commands.
Top-level commands are ``echo``. Single quotes never appear inside a double-quoted ``${...}``: bash
treats them as literal there (``"${x:-'$(cmd)'}"`` runs ``cmd``) and tree-sitter-bash does not, a
difference the reader settles bash's way (tested on its own).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass
class ShellLines:
    seed: int
    rng: random.Random = field(init=False)
    counter: int = 0
    # tree-sitter-bash reads the word of ${x#WORD}, ${x%WORD}, ${x/WORD/WORD} and ${x:?WORD} as a
    # pattern or message and does not look for substitutions there; bash runs them.
    patterns_used: bool = False
    # tree-sitter-bash does not look inside backticks within ${...}, and reads two backtick
    # substitutions in one command as one nested in the other; bash runs each.
    backticks_used: bool = False

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def line(self) -> str:
        """One line: ``echo`` commands joined by operators, arguments built from the pieces below."""
        self.patterns_used = self.backticks_used = False
        parts = [self.command(2)]
        for _ in range(self.rng.randrange(0, 3)):
            parts.append(self.rng.choice([" ; ", " && ", " || ", " | "]))
            parts.append(self.command(2))
        return "".join(parts)

    def command(self, depth: int) -> str:
        words = [self.word(depth) for _ in range(self.rng.randrange(1, 4))]
        return "echo " + " ".join(words)

    @property
    def tree_sitter_reads_all(self) -> bool:
        """Whether the last line uses only what tree-sitter-bash reads as bash does."""
        return not (self.patterns_used or self.backticks_used)

    def marker(self) -> str:
        self.counter += 1
        return f"m{self.counter}"

    def substitution(self, depth: int, quoted: bool) -> str:
        inner = f"touch {self.marker()}"
        if depth > 0 and self.rng.random() < 0.4:
            inner += f" {self.word(depth - 1)}"
        if self.rng.random() < 0.2:
            inner = f"echo a; {inner}"
        if self.rng.random() < 0.3 and "`" not in inner and "\\" not in inner and '"' not in inner:
            self.backticks_used = True
            return f"`{inner}`"
        return f"$({inner})"

    def word(self, depth: int) -> str:
        choices = ["plain", "single", "double", "variable", "substitution", "parameter", "parameter"]
        kind = self.rng.choice(choices if depth > 0 else choices[:4])
        if kind == "plain":
            return self.rng.choice(["abc", "x.txt", "a-b", "1", "a=b", "-n"])
        if kind == "single":
            return self.rng.choice(["'$(touch no)'", "'}'", "'a b'", "'${x:-y}'"])
        if kind == "double":
            return '"' + self.double_quoted(depth) + '"'
        if kind == "variable":
            return self.rng.choice(["$x", "${x}", "${#x}", "$1", "${x:-d}"])
        if kind == "substitution":
            return self.substitution(depth - 1, quoted=False)
        return self.parameter(depth - 1, quoted=False)

    def double_quoted(self, depth: int) -> str:
        pieces = []
        for _ in range(self.rng.randrange(1, 3)):
            kind = self.rng.choice(["text", "text", "substitution", "parameter"] if depth > 0 else ["text"])
            if kind == "text":
                pieces.append(self.rng.choice(["a b", "}", "$x", "x\\\"y", "(", ")"]))
            elif kind == "substitution":
                pieces.append(self.substitution(depth - 1, quoted=True))
            else:
                pieces.append(self.parameter(depth - 1, quoted=True))
        return "".join(pieces)

    def parameter(self, depth: int, quoted: bool) -> str:
        """``${x:-WORD}`` and its relatives, WORD holding substitutions, quotes and nested ``${...}``."""
        operator = self.rng.choice([":-", "-", ":=", ":+", "/", "//", "#", "%", ":?"])
        self.patterns_used = self.patterns_used or operator in ("/", "//", "#", "%", ":?")
        inside = self.parameter_word(depth, quoted)
        if operator in ("/", "//"):
            return "${x" + operator + inside + "/" + self.parameter_word(depth, quoted) + "}"
        name = self.rng.choice(["x", "y", "a[1]"])
        return "${" + name + operator + inside + "}"

    def parameter_word(self, depth: int, quoted: bool) -> str:
        kinds = ["plain", "substitution", "double", "nested"] + ([] if quoted else ["single"])
        kind = self.rng.choice(kinds if depth > 0 else ["plain", "substitution"])
        if kind == "plain":
            return self.rng.choice(["d", "a b", "x.y", ""])
        if kind == "substitution":
            return self.substitution(max(depth - 1, 0), quoted)
        if kind == "double":
            return '"' + self.double_quoted(depth - 1) + '"'
        if kind == "single":
            return self.rng.choice(["'}'", "'a b'", "'$(touch no)'"])
        return self.parameter(depth - 1, quoted)
