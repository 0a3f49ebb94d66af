"""Everyday work still runs inside the sandbox: git, a test suite, a make build, package-free scripts,
temporary files. The workspace is writable, the interpreter and /usr readable, /tmp private."""

from __future__ import annotations

import shlex
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agcore.tools.workspace import Workspace
from tests.tools.hide_programs import path_without
from tests.tools.sandbox_support import require_bwrap, scratch_dir

PY = shlex.quote(sys.executable)

FILES = {
    "src/calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": (
        "import sys, os\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'src'))\n"
        "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    ),
    "gen.py": "import sys\nprint('generated from', sys.argv[1])\n",
    "Makefile": f"build/out.txt: gen.py\n\tmkdir -p build\n\t{sys.executable} gen.py input > build/out.txt\n",
    "tool.sh": (
        "set -e\ntmp=$(mktemp -d)\necho scratch > \"$tmp/x\"\ncat \"$tmp/x\"\n"
        "printf 'b\\na\\nb\\n' | sort | uniq -c | sort -rn > counts.txt\n"
        "ls -d /usr/lib >/dev/null\necho done\n"
    ),
    "where.py": "import sys\nprint(sys.prefix)\n",
    "hello.js": "console.log(6 * 7)\n",
    "hello.c": '#include <stdio.h>\nint main(void) { puts("hello from C"); return 0; }\n',
    "tmpfile.py": (
        "import tempfile\nwith tempfile.NamedTemporaryFile('w', delete=False) as f:\n    f.write('x')\n"
        "print(f.name.startswith('/tmp/'))\n"
    ),
}

# (command, a phrase its output must contain); each must exit 0
BENIGN: list[tuple[str, str]] = [
    ("git init -q && git add -A && git -c user.email=a@b.c -c user.name=A commit -qm init", "exit code: 0"),
    ("git log --oneline", "init"),
    ("git status --short", "stdout: (empty)"),
    ("git checkout -q -b feature && git branch", "* feature"),
    ("echo change >> src/calc.py && git diff --stat", "1 insertion"),
    ("git stash -q && git stash list", "stash@{0}"),
    (f"{PY} -m pytest -q -p no:cacheprovider tests", "1 passed"),
    (f"{PY} -m unittest discover -s tests -p 'test_*.py'", "exit code: 0"),
    ("make", "mkdir -p build"),
    ("cat build/out.txt", "generated from input"),
    ("bash tool.sh", "scratch"),
    ("cat counts.txt", "2 b"),
    (f"{PY} tmpfile.py", "True"),
    (f"{PY} -m compileall -q src && ls src/__pycache__", "calc."),
    ("find . -name '*.py' -not -path './.git/*' | sort | xargs wc -l", "total"),
    ("tar czf src.tgz src && tar tzf src.tgz", "src/calc.py"),
    ("sed -i s/add/plus/ src/calc.py && grep -n plus src/calc.py", "1:def plus"),
    ("mkdir -p out/deep && cp -r src out/deep/ && ls out/deep/src", "calc.py"),
    ("rm -rf out build && ls", "src"),
    # a virtualenv made inside the workspace, by agcore's own Python (outside: test_sandbox_reads.py)
    (f"{PY} -m venv --without-pip venv-in && venv-in/bin/python where.py", "venv-in"),
    # near the guard's refusals of xargs/sort -o/awk/find/git -C/grep -r, and still fine
    ("sort -o sorted.txt counts.txt && cat sorted.txt", "2 b"),
    ("awk '{print $1}' counts.txt", "2"),
    ("printf 'src/calc.py\\n' | xargs grep -n def", "def plus"),
    ("grep -rn plus .", "calc.py"),
    ("git -C src status --short", "exit code: 0"),
    ("find . -name '*.pyc' -delete && echo deleted", "deleted"),
    ("find . -name '*.py' -not -path './.git/*' -exec grep -l plus {} +", "calc.py"),
]
# Programs a developer machine may lack (a Debian box with bubblewrap from Flatpak has no ripgrep):
# their cases run where they are installed, and are reported as left out where not.
OPTIONAL: dict[str, list[tuple[str, str]]] = {
    "rg": [("rg -n plus src", "calc.py")],
    "cmake": [("cmake -E make_directory made && cmake -E touch made/x && ls made", "x")],
    "cc": [("cc -O2 -o hello hello.c && ./hello", "hello from C")],
    "c++": [("c++ --version", "exit code: 0")],
    "cargo": [("cargo --version && rustc --version", "rustc")],
    "node": [("node hello.js", "42")],
}


def runnable_cases() -> tuple[list[tuple[str, str]], list[str]]:
    """The benign cases whose programs are installed here, and the programs that are not."""
    cases = list(BENIGN)
    missing = []
    for program, extra in OPTIONAL.items():
        if shutil.which(program) is None:
            missing.append(program)
        else:
            cases.extend(extra)
    return cases, missing


@pytest.fixture
def workspace() -> Iterator[Workspace]:
    require_bwrap()
    for scratch in scratch_dir():
        for name, text in FILES.items():
            (scratch / name).parent.mkdir(parents=True, exist_ok=True)
            (scratch / name).write_text(text)
        yield Workspace(scratch, sandbox="required", confirm_commands=False)


@pytest.mark.anyio
async def test_everyday_commands_run_inside_the_sandbox(workspace: Workspace) -> None:
    assert workspace.sandboxed
    cases, missing = runnable_cases()
    if missing:
        print(f"\nbenign corpus: left out the cases of {', '.join(missing)} (not installed)")
    for command, phrase in cases:
        out = await workspace.run_command(command, timeout=60)
        assert "exit code: 0" in out, out
        assert phrase in out, out


def test_cases_of_missing_programs_are_left_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine with bubblewrap but without ripgrep (or cmake) runs the rest of the corpus."""
    hidden = set(OPTIONAL)
    monkeypatch.setenv("PATH", path_without(hidden, tmp_path))
    cases, missing = runnable_cases()
    assert sorted(missing) == sorted(hidden)
    assert not any(command.split()[0] in hidden for command, _ in cases)
    assert len(cases) == len(BENIGN)
