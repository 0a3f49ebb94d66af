"""The shell reader against real parsers, on generated lines (``tests/tools/shell_lines.py``): the
command substitutions it finds are those tree-sitter-bash finds, and include every one bash itself
runs. A substitution the reader misses is one the guard never checks (``${x:-$(rm -rf ~)}`` was)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from agcore.tools import CommandDenied, CommandGuard
from agcore.tools._shell_syntax import ShellSyntaxError, parse_script
from tests.tools.shell_lines import ShellLines

tree_sitter = pytest.importorskip("tree_sitter", reason="tree-sitter is in the dev extra")
tree_sitter_bash = pytest.importorskip("tree_sitter_bash", reason="tree-sitter-bash is in the dev extra")

LINES = 400
_MARKER = re.compile(r"^m\d+$")


def reader_markers(script: str) -> set[str]:
    """Markers of the ``touch`` commands inside any substitution the reader finds, at any depth."""
    found: set[str] = set()
    pending = list(parse_script(script).substitutions)
    while pending:
        parsed = parse_script(pending.pop())
        for command in parsed.commands:
            if command.argv[:1] == ("touch",):
                found.update(a for a in command.argv[1:] if _MARKER.match(a))
        pending.extend(parsed.substitutions)
    return found


def tree_sitter_markers(parser: object, script: str) -> set[str] | None:
    """The same from tree-sitter-bash (None when it reports a syntax error: nothing to compare)."""
    tree = parser.parse(script.encode())  # type: ignore[attr-defined]
    if tree.root_node.has_error:
        return None
    found: set[str] = set()
    stack = [(tree.root_node, False)]
    while stack:
        node, inside = stack.pop()
        inside = inside or node.type == "command_substitution"
        if node.type == "command" and inside:
            words = [c.text.decode() for c in node.children if c.type in ("command_name", "word")]
            if words[:1] == ["touch"]:
                found.update(w for w in words[1:] if _MARKER.match(w))
        stack.extend((child, inside) for child in node.children)
    return found


@pytest.fixture(scope="module")
def parser() -> object:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def test_the_generator_makes_the_lines_that_matter() -> None:
    generator = ShellLines(seed=7)
    lines = [generator.line() for _ in range(LINES)]
    assert len(set(lines)) > LINES * 0.9
    assert sum("${" in line and "$(" in line for line in lines) > LINES * 0.3
    assert sum("`" in line for line in lines) > LINES * 0.1


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_reader_finds_the_substitutions_tree_sitter_finds(parser: object, seed: int) -> None:
    """Every substitution tree-sitter-bash finds, the reader finds; on lines tree-sitter reads as bash
    does (no pattern words, no backticks: see ``ShellLines``) they find the same ones. Where the
    reader finds more, bash runs them (the next test)."""
    generator = ShellLines(seed=seed)
    compared = exact = 0
    disagreements: list[str] = []
    for _ in range(LINES):
        line = generator.line()
        expected = tree_sitter_markers(parser, line)
        if expected is None:
            continue
        compared += 1
        try:
            found = reader_markers(line)
        except ShellSyntaxError as exc:
            disagreements.append(f"{line!r}: the reader could not read it ({exc})")
            continue
        if generator.tree_sitter_reads_all:
            exact += 1
            if found != expected:
                disagreements.append(f"{line!r}: reader {sorted(found)}, tree-sitter {sorted(expected)}")
        elif not expected <= found:
            disagreements.append(f"{line!r}: the reader missed {sorted(expected - found)}")
    assert compared > LINES * 0.8, f"tree-sitter read only {compared} of {LINES} lines"
    assert exact > LINES * 0.2
    assert not disagreements, "\n".join(disagreements[:20])


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_every_substitution_bash_runs_is_one_the_reader_found(tmp_path: Path) -> None:
    """bash is the final word: run each line with every substitution touching its marker; the reader
    must have found every marker bash created (it may find more: ``${x:+$(...)}`` does not run when
    ``x`` is unset, and the guard checks it all the same)."""
    generator = ShellLines(seed=11)
    lines = [generator.line() for _ in range(150)]
    script = "".join(f"cd {tmp_path}/{n} && ( {line} ) >/dev/null 2>&1\n" for n, line in enumerate(lines))
    for n in range(len(lines)):
        (tmp_path / str(n)).mkdir()
    subprocess.run(["bash", "-c", script], env={"PATH": os.defpath}, timeout=60, check=False)
    ran = 0
    for n, line in enumerate(lines):
        created = {p.name for p in (tmp_path / str(n)).iterdir() if _MARKER.match(p.name)}
        ran += len(created)
        assert created <= reader_markers(line), line
    assert ran > 100  # the lines did run their substitutions


@pytest.mark.parametrize(
    "command",
    [
        "bash -c 'echo ${x:-$(touch /etc/p)}'",
        "echo ${x:=`rm -rf /`}",
        "echo ${x/$(rm -rf /)/}",
        "echo ${x:-${y:-$(rm -rf /)}}",
        'echo "${x:-"$(rm -rf /)"}"',
        "echo \"${x:-'$(rm -rf /)'}\"",  # bash runs it: single quotes are literal in "${...}"
        "echo \"${x:-'}'$(rm -rf /)}\"",  # a quoted } does not end the expansion
        "echo ${a[$(rm -rf /)]}",
        "echo ${x@P}",  # expands the value as a prompt: runs the $(...) it holds
    ],
)
def test_the_guard_checks_what_hides_in_a_parameter_expansion(tmp_path: Path, command: str) -> None:
    with pytest.raises(CommandDenied):
        CommandGuard(workspace=tmp_path).check(command)


def test_plain_parameter_expansions_still_run(tmp_path: Path) -> None:
    guard = CommandGuard(workspace=tmp_path)
    for command in ["echo ${x:-default}", "bash -c 'echo ${HOME#/}'", 'echo "${x:-a b}" ${#x}']:
        guard.check(command)
