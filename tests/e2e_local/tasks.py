"""The e2e suite's tasks: each lays out a fresh workspace, says what to ask, and checks the outcome.

A check reads the workspace (files, the tests' exit status) and, for the one "explain" task, whether
the answer (the text after the last tool result: ``final_answer``) holds a fact only the file holds.
It never trusts what the model says it did. Each task's acceptance check (``check_cmd``, what a user
passes as ``--check``) is at least as strict: when it passes, the judge does too (a check reads the
answer on its standard input), so a checked run has no false success by construction. Every task
also has a reference solution (``solve``): ``test_tasks.py`` proves, offline and without a model,
that each check fails on the untouched workspace and passes once the work is really done.
"""

from __future__ import annotations

import configparser
import dataclasses
import hashlib
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["TASKS", "Check", "Outcome", "Task", "final_answer", "run_pytest"]

# agcore run's closing line(s): "✓ done · 3 model calls · ...", "✗ failed · ...", "■ stopped ...".
_SUMMARY = re.compile(r"^[✓✗■⏹] .*\b\d[\d,]* model calls?\b")


@dataclass(frozen=True)
class Outcome:
    """What a run left besides the workspace: the exit status and everything it printed."""

    exit_code: int | None
    output: str = ""


@dataclass(frozen=True)
class Check:
    """Whether a task was achieved, and why not."""

    achieved: bool
    reason: str = ""


@dataclass(frozen=True)
class Task:
    """One real task: ``files`` make the workspace; ``prompt`` (``agcore run``) or ``plan`` (YAML for
    ``execute_plan``) is what is asked; ``check`` judges the result; ``solve`` does the work by hand."""

    name: str
    via: Literal["cli", "plan"]
    files: dict[str, str]
    check: Callable[[Path, Outcome], Check]
    solve: Callable[[Path], None]
    prompt: str = ""
    plan: str = ""
    #: The acceptance check a user who has tests would pass (``agcore run --check CMD``, a plan's
    #: ``check:``): a shell command in the workspace that exits 0 when the work is done. It gives
    #: nothing away the task does not say (no expected value the model must find itself).
    check_cmd: str = ""
    #: A question's reference answer (the work is the answer, ``solve`` does nothing): the offline
    #: tests give it to the judge and, on standard input, to the check.
    answer: str = ""

    def setup(self, root: Path) -> None:
        """Write the task's starting files under ``root``."""
        for name, text in self.files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def run_pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """pytest in ``root`` with this interpreter, isolated from the repository's configuration."""
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(root), *args],
        cwd=root, env=env, capture_output=True, text=True, timeout=120, check=False,
    )


def _python(root: Path, code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                          timeout=60, check=False)


def _read(root: Path, name: str) -> str | None:
    path = root / name
    return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None


def _tests_pass(root: Path, *args: str) -> Check:
    done = run_pytest(root, *args)
    if done.returncode == 0:
        return Check(True)
    last = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
    return Check(False, f"pytest exit {done.returncode}: {last}")


def _holds(root: Path, name: str, expected: str, described: str = "") -> Check:
    """``name`` holds ``expected`` (surrounding whitespace aside); the reason names ``described``
    (default: the value) when not."""
    text = _read(root, name)
    if text is None:
        return Check(False, f"{name} was not written")
    if text.strip() != expected:
        return Check(False, f"{name} holds {text.strip()[:60]!r}, not {described or expected}")
    return Check(True)


def _works_and_tested(root: Path, code: str, what: str, test_file: str, test: str) -> Check:
    """``code`` runs (the function does what the task says), ``test_file`` has ``test`` and passes."""
    if _python(root, code).returncode != 0:
        return Check(False, f"{what} is missing or wrong")
    if f"def {test}" not in (_read(root, test_file) or ""):
        return Check(False, f"{test_file} has no {test}")
    return _tests_pass(root, test_file)


def _renamed(root: Path, files: tuple[str, ...], old: str, code: str, what: str) -> Check:
    """No file of ``files`` still says ``old``, and ``code`` (the new name in use) runs."""
    for name in files:
        if old in (_read(root, name) or old):
            return Check(False, f"{name} still says {old} (or is gone)")
    done = _python(root, code)
    if done.returncode != 0:
        return Check(False, f"{what} does not work: " + (done.stderr.strip().splitlines() or ["?"])[-1][:120])
    return Check(True)


def _unchanged(root: Path, name: str, original: str) -> Check | None:
    if _read(root, name) != textwrap.dedent(original).lstrip("\n"):
        return Check(False, f"{name} was changed (the task said not to)")
    return None


# ------------------------------------------------------------------------------------- explain

_SETTINGS = """
    # Deployment settings for the billing service.
    SERVICE_NAME = "billing"
    # The release codename is used in log lines and dashboards.
    RELEASE_CODENAME = "heliotrope-5731"
    RETRY_LIMIT = 4
"""


def final_answer(output: str) -> str:
    """The answer in ``agcore run``'s output: the text after the last tool call and its result
    (``▸ name(...)`` then indented result lines), without the closing summary and without the
    acceptance checks' lines (``⧗ check: CMD`` and the indented lines under it, which name the
    check's command). An echoed call line (``▸ write_file(path="settings.py", content="...")``), a
    tool's result or a check's command is no answer."""
    lines = output.splitlines()
    calls = [n for n, line in enumerate(lines) if line.startswith("▸ ")]
    start = calls[-1] + 1 if calls else 0
    while calls and start < len(lines) and (lines[start].startswith((" ", "\t")) or not lines[start].strip()):
        start += 1
    kept: list[str] = []
    in_check = False
    for line in lines[start:]:
        in_check = line.startswith("⧗ ") or (in_check and line.startswith((" ", "\t")))
        if not in_check and not _SUMMARY.match(line):
            kept.append(line)
    return "\n".join(kept).strip()


def _check_explain(root: Path, outcome: Outcome) -> Check:
    answer = final_answer(outcome.output).lower()
    if "heliotrope" not in answer and "5731" not in answer:
        return Check(False, "the answer does not mention the codename, which only settings.py holds")
    return Check(True)


def _solve_explain(root: Path) -> None:
    pass  # the answer is the model's: test_tasks.py gives the check an answer instead


# ---------------------------------------------------------------------------------- count lines

_ROWS = "".join(f"row-{n:03d},{n * 7 % 100}\n" for n in range(1, 38))  # 37 lines


def _check_count(root: Path, outcome: Outcome) -> Check:
    return _holds(root, "count.txt", "37")


def _solve_count(root: Path) -> None:
    lines = (root / "data.csv").read_text(encoding="utf-8").splitlines()
    (root / "count.txt").write_text(f"{len(lines)}\n", encoding="utf-8")


# ---------------------------------------------------------------------------------- create file

def _check_create(root: Path, outcome: Outcome) -> Check:
    return _holds(root, "hello.txt", "Hello from agcore")


def _solve_create(root: Path) -> None:
    (root / "hello.txt").write_text("Hello from agcore\n", encoding="utf-8")


# ----------------------------------------------------------------------- add a function + test

_MATHUTILS = '''
    def add(a, b):
        """The sum of a and b."""
        return a + b
'''
_TEST_MATHUTILS = """
    from mathutils import add


    def test_add():
        assert add(2, 3) == 5
"""


def _check_add_function(root: Path, outcome: Outcome) -> Check:
    return _works_and_tested(root, "from mathutils import multiply; assert multiply(6, 7) == 42; "
                                   "assert multiply(-2, 5) == -10",
                             "mathutils.multiply", "test_mathutils.py", "test_multiply")


def _solve_add_function(root: Path) -> None:
    with (root / "mathutils.py").open("a", encoding="utf-8") as out:
        out.write('\n\ndef multiply(a, b):\n    """The product of a and b."""\n    return a * b\n')
    (root / "test_mathutils.py").write_text(
        "from mathutils import add, multiply\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_multiply():\n    assert multiply(6, 7) == 42\n", encoding="utf-8")


# ---------------------------------------------------------------------------- fix failing test

_CALC = '''
    def average(numbers):
        """The arithmetic mean of a non-empty list of numbers."""
        return sum(numbers) / (len(numbers) + 1)
'''
_TEST_CALC = """
    from calc import average


    def test_average():
        assert average([2, 4, 6]) == 4


    def test_average_of_one():
        assert average([5]) == 5
"""


def _check_fix_test(root: Path, outcome: Outcome) -> Check:
    return _unchanged(root, "test_calc.py", _TEST_CALC) or _tests_pass(root, "test_calc.py")


def _solve_fix_test(root: Path) -> None:
    path = root / "calc.py"
    path.write_text(path.read_text(encoding="utf-8").replace("(len(numbers) + 1)", "len(numbers)"),
                    encoding="utf-8")


# -------------------------------------------------------------------------------------- rename

_USERS = '''
    def get_usr(user_id):
        """The user record for user_id."""
        return {"id": user_id, "name": f"user{user_id}"}
'''
_APP = """
    from users import get_usr


    def greeting(user_id):
        return "Hi " + get_usr(user_id)["name"]
"""


def _check_rename(root: Path, outcome: Outcome) -> Check:
    return _renamed(root, ("users.py", "app.py"), "get_usr",
                    "import app, users; assert users.get_user(3)['id'] == 3; "
                    "assert app.greeting(3) == 'Hi user3'",
                    "users.get_user or app.greeting")


def _solve_rename(root: Path) -> None:
    for name in ("users.py", "app.py"):
        path = root / name
        path.write_text(path.read_text(encoding="utf-8").replace("get_usr", "get_user"), encoding="utf-8")


# ------------------------------------------------------------------------------- edit a config

_CONFIG = """
    [server]
    host = 127.0.0.1
    port = 8080
    workers = 2

    [logging]
    level = info
"""


def _check_config(root: Path, outcome: Outcome) -> Check:
    parser = configparser.ConfigParser()
    try:
        parser.read_string(_read(root, "config.ini") or "")
    except configparser.Error as exc:
        return Check(False, f"config.ini no longer parses: {exc}"[:160])
    if parser.get("server", "port", fallback=None) != "9090":
        return Check(False, f"server.port is {parser.get('server', 'port', fallback=None)!r}, not '9090'")
    kept = (parser.get("server", "host", fallback=None), parser.get("server", "workers", fallback=None),
            parser.get("logging", "level", fallback=None))
    if kept != ("127.0.0.1", "2", "info"):
        return Check(False, "other settings of config.ini were lost or changed")
    return Check(True)


def _solve_config(root: Path) -> None:
    path = root / "config.ini"
    path.write_text(path.read_text(encoding="utf-8").replace("port = 8080", "port = 9090"), encoding="utf-8")


# ------------------------------------------------------------------------------- list the files

_SRC_FILES = {"src/alpha.py": "A = 1\n", "src/beta.py": "B = 2\n", "src/gamma.py": "C = 3\n",
              "src/README.md": "The sources.\n", "src/data.json": "{}\n"}


def _check_list(root: Path, outcome: Outcome) -> Check:
    text = _read(root, "files.txt")
    if text is None:
        return Check(False, "files.txt was not written")
    names = [Path(line.strip().strip("-* `")).name for line in text.splitlines() if line.strip()]
    if names != ["alpha.py", "beta.py", "gamma.py"]:
        return Check(False, f"files.txt lists {names[:6]}")
    return Check(True)


def _solve_list(root: Path) -> None:
    (root / "files.txt").write_text("alpha.py\nbeta.py\ngamma.py\n", encoding="utf-8")


# --------------------------------------------------------------------------------- find by grep

_HEADERS = {
    "pkg/__init__.py": "",
    "pkg/net/__init__.py": "",
    "pkg/net/wire.py": 'def parse_header(line):\n    """Split "Name: value"."""\n'
                       '    name, _, value = line.partition(":")\n    return name.strip(), value.strip()\n',
    "pkg/net/client.py": "from pkg.net.wire import parse_header\n\n\ndef fetch(lines):\n"
                         "    return [parse_header(x) for x in lines]\n",
    "pkg/util.py": "def slug(text):\n    return text.lower().replace(' ', '-')\n",
}


def _check_find(root: Path, outcome: Outcome) -> Check:
    text = _read(root, "answer.txt")
    if text is None:
        return Check(False, "answer.txt was not written")
    if text.strip().strip("`'\"").removeprefix("./") != "pkg/net/wire.py":
        return Check(False, f"answer.txt holds {text.strip()[:60]!r}, not pkg/net/wire.py")
    return Check(True)


def _solve_find(root: Path) -> None:
    (root / "answer.txt").write_text("pkg/net/wire.py\n", encoding="utf-8")


# ------------------------------------------------------------------------------- run a command

_GENERATE = """
    import hashlib

    print(hashlib.sha256(b"agcore-e2e").hexdigest()[:12])
"""


def _generated() -> str:
    """What generate.py prints: a hash the model cannot guess."""
    return hashlib.sha256(b"agcore-e2e").hexdigest()[:12]


def _check_run(root: Path, outcome: Outcome) -> Check:
    return _holds(root, "output.txt", _generated(), "what generate.py prints")


def _solve_run(root: Path) -> None:
    (root / "output.txt").write_text(_generated() + "\n", encoding="utf-8")


# ------------------------------------------------------------------------------------- plans

_PLAN_GREET = """
    goal: A greet function with a passing test
    steps:
      - id: code
        description: >-
          Create the file greet.py defining a function greet(name) that returns the string
          "Hello, " + name + "!" (for example greet("Ada") returns "Hello, Ada!").
        tool_hints: [write_file]
      - id: test
        description: >-
          Create the file test_greet.py with a pytest test function test_greet that imports greet
          from greet and asserts greet("Ada") == "Hello, Ada!".
        depends_on: [code]
        tool_hints: [write_file]
      - id: run
        description: Run the command `python -m pytest -q test_greet.py` and report whether it passed.
        depends_on: [test]
        tool_hints: [run_command]
"""


def _check_plan_greet(root: Path, outcome: Outcome) -> Check:
    return _works_and_tested(root, "from greet import greet; assert greet('Ada') == 'Hello, Ada!'",
                             "greet.greet", "test_greet.py", "test_greet")


def _solve_plan_greet(root: Path) -> None:
    (root / "greet.py").write_text('def greet(name):\n    return "Hello, " + name + "!"\n', encoding="utf-8")
    (root / "test_greet.py").write_text(
        "from greet import greet\n\n\ndef test_greet():\n    assert greet('Ada') == 'Hello, Ada!'\n",
        encoding="utf-8")


_PLAN_FIX = """
    goal: Fix the average bug and record it in the changelog
    steps:
      - id: read
        description: Read calc.py and test_calc.py to find why the tests fail.
        tool_hints: [read_file]
      - id: fix
        description: >-
          Fix the bug in the function average in calc.py so that `python -m pytest -q test_calc.py`
          passes. Do not change test_calc.py.
        depends_on: [read]
        tool_hints: [apply_patch, write_file, run_command]
      - id: changelog
        description: Add the line "- Fixed average()" at the end of CHANGELOG.md.
        depends_on: [fix]
        tool_hints: [read_file, write_file]
"""
_CHANGELOG = """
    # Changelog

    ## Unreleased
"""


def _check_plan_fix(root: Path, outcome: Outcome) -> Check:
    broken = _unchanged(root, "test_calc.py", _TEST_CALC) or _tests_pass(root, "test_calc.py")
    if not broken.achieved:
        return broken
    log = _read(root, "CHANGELOG.md") or ""
    if "# Changelog" not in log or "fixed average" not in log.lower():
        return Check(False, "CHANGELOG.md does not record the fix (or lost its heading)")
    return Check(True)


def _solve_plan_fix(root: Path) -> None:
    _solve_fix_test(root)
    with (root / "CHANGELOG.md").open("a", encoding="utf-8") as out:
        out.write("- Fixed average()\n")


_PLAN_NOTES = """
    goal: Summarise the settings into a notes file
    steps:
      - id: read
        description: Read settings.py.
        tool_hints: [read_file]
      - id: write
        description: >-
          Write the file NOTES.md with one line per setting defined in settings.py, in the form
          NAME = value (copy the names and values exactly).
        depends_on: [read]
        tool_hints: [write_file]
"""


def _check_plan_notes(root: Path, outcome: Outcome) -> Check:
    notes = _read(root, "NOTES.md")
    if notes is None:
        return Check(False, "NOTES.md was not written")
    missing = [v for v in ("billing", "heliotrope-5731", "4") if v not in notes]
    if missing or "RETRY_LIMIT" not in notes or "RELEASE_CODENAME" not in notes:
        return Check(False, f"NOTES.md misses settings or values ({', '.join(missing) or 'names'})")
    return Check(True)


def _solve_plan_notes(root: Path) -> None:
    (root / "NOTES.md").write_text('SERVICE_NAME = "billing"\nRELEASE_CODENAME = "heliotrope-5731"\n'
                                   "RETRY_LIMIT = 4\n", encoding="utf-8")


def _sha(text: str) -> str:
    return hashlib.sha256(textwrap.dedent(text).lstrip("\n").encode()).hexdigest()[:16]


# The checks, as commands: each passes only where its task's judge does (a check for what the
# judge holds fixed: a file kept, a name exact). `python -c` tracebacks show no source line, so an
# assert tells the model that the check failed, not the value it wanted.
def _kept(name: str, text: str) -> str:
    """A check that ``name`` still holds ``text`` (the judge reads facts from it, or needs it kept)."""
    return (f"python -c \"import hashlib; assert hashlib.sha256(open('{name}', 'rb').read())"
            f".hexdigest()[:16] == '{_sha(text)}', '{name} was changed'\"")


_LISTED = "alpha.py beta.py gamma.py"  # src/'s Python files: hashed, never named in a check
_DEFINED_IN = "pkg/net/wire.py"
_TEST_CALC_KEPT = _kept("test_calc.py", _TEST_CALC)
_SETTINGS_KEPT = _kept("settings.py", _SETTINGS)
_CHECKS = {
    # The answer (on the check's standard input) names the codename the file holds: not named here.
    "explain-file": f"{_SETTINGS_KEPT} && python -c \"import re, sys; name = re.search("
                    "r'RELEASE_CODENAME = .(.+).', open('settings.py').read()).group(1).lower(); "
                    "assert name in sys.stdin.read().lower(), 'the answer does not give the codename "
                    "settings.py holds'\"",
    "count-lines": f"{_kept('data.csv', _ROWS)} && python -c \"assert open('count.txt').read().strip() == "
                   "str(len(open('data.csv').read().splitlines()))\"",
    "create-file": "python -c \"assert open('hello.txt').read().strip() == 'Hello from agcore'\"",
    "add-function-and-test": "python -c \"from mathutils import multiply; assert multiply(6, 7) == 42; "
                             "assert multiply(-2, 5) == -10\" && grep -q 'def test_multiply' "
                             "test_mathutils.py && python -m pytest -q test_mathutils.py",
    "fix-failing-test": f"python -m pytest -q test_calc.py && {_TEST_CALC_KEPT}",
    "rename-function": "python -c \"import app, users; assert 'get_usr' not in open('users.py').read() + "
                       "open('app.py').read(); assert users.get_user(3)['id'] == 3; "
                       "assert app.greeting(3) == 'Hi user3'\"",
    "edit-config": "python -c \"import configparser; c = configparser.ConfigParser(); c.read('config.ini'); "
                   "assert c['server']['port'] == '9090'; "
                   "assert (c['server']['host'], c['server']['workers'], c['logging']['level']) == "
                   "('127.0.0.1', '2', 'info')\"",
    "list-files": "python -c \"import hashlib, pathlib; names = [pathlib.Path(x.strip()).name for x in "
                  "open('files.txt').read().splitlines() if x.strip()]; found = sorted(p.name for p in "
                  "pathlib.Path('src').glob('*.py')); assert names == found; assert hashlib.sha256(' '"
                  f".join(found).encode()).hexdigest()[:16] == '{_sha(_LISTED)}', 'src was changed'\"",
    "find-definition": "python -c \"import hashlib, pathlib; "
                       "path = pathlib.Path(open('answer.txt').read().strip()); "
                       "assert not path.is_absolute() and '..' not in path.parts, 'a workspace path'; "
                       "assert 'def parse_header' in path.read_text(); assert hashlib.sha256(path.as_posix()"
                       f".encode()).hexdigest()[:16] == '{_sha(_DEFINED_IN)}', 'not where it was defined'\"",
    "run-command": f"{_kept('generate.py', _GENERATE)} && "
                   "python -c \"import subprocess, sys; printed = subprocess.run([sys.executable, "
                   "'generate.py'], capture_output=True, text=True).stdout; "
                   "assert open('output.txt').read().strip() == printed.strip()\"",
    "plan-greet": "python -c \"from greet import greet; assert greet('Ada') == 'Hello, Ada!'\" && "
                  "grep -q 'def test_greet' test_greet.py && python -m pytest -q test_greet.py",
    "plan-fix-and-changelog": f"python -m pytest -q test_calc.py && {_TEST_CALC_KEPT} && "
                              "grep -qi 'fixed average' CHANGELOG.md && grep -q '# Changelog' CHANGELOG.md",
    "plan-notes": f"{_SETTINGS_KEPT} && "
                  "python -c \"import re; text = open('NOTES.md').read(); pairs = re.findall("
                  "r'^([A-Z_]+) = [^A-Za-z0-9]*([A-Za-z0-9-]+)', open('settings.py').read(), re.M); "
                  "assert pairs and all(n in text and v in text for n, v in pairs)\"",
}


_TASKS: tuple[Task, ...] = (
    Task("explain-file", "cli", {"settings.py": _SETTINGS}, _check_explain, _solve_explain,
         prompt="Read settings.py and explain in two sentences what it configures, including the "
                "release codename.",
         answer="It configures the billing service's deployment; the release codename is heliotrope-5731."),
    Task("count-lines", "cli", {"data.csv": _ROWS}, _check_count, _solve_count,
         prompt="Count the lines of data.csv and write just that number into a new file count.txt."),
    Task("create-file", "cli", {}, _check_create, _solve_create,
         prompt="Create a file hello.txt whose content is exactly: Hello from agcore"),
    Task("add-function-and-test", "cli", {"mathutils.py": _MATHUTILS, "test_mathutils.py": _TEST_MATHUTILS},
         _check_add_function, _solve_add_function,
         prompt="Add a function multiply(a, b) that returns a * b to mathutils.py, add a test "
                "test_multiply for it to test_mathutils.py, then run `python -m pytest -q` to check."),
    Task("fix-failing-test", "cli", {"calc.py": _CALC, "test_calc.py": _TEST_CALC},
         _check_fix_test, _solve_fix_test,
         prompt="`python -m pytest -q test_calc.py` fails. Fix the bug in calc.py (do not change "
                "test_calc.py) and run the tests to check."),
    Task("rename-function", "cli", {"users.py": _USERS, "app.py": _APP}, _check_rename, _solve_rename,
         prompt="Rename the function get_usr to get_user in users.py and update every use of it in "
                "app.py."),
    Task("edit-config", "cli", {"config.ini": _CONFIG}, _check_config, _solve_config,
         prompt="In config.ini change the server port from 8080 to 9090; keep everything else."),
    Task("list-files", "cli", _SRC_FILES, _check_list, _solve_list,
         prompt="Write the names of the Python files (.py) in the src directory into files.txt, one "
                "name per line, sorted alphabetically."),
    Task("find-definition", "cli", _HEADERS, _check_find, _solve_find,
         prompt="Which file defines the function parse_header? Write its path, relative to the "
                "workspace, into answer.txt (just the path)."),
    Task("run-command", "cli", {"generate.py": _GENERATE}, _check_run, _solve_run,
         prompt="Run `python generate.py` and write exactly what it prints into output.txt."),
    Task("plan-greet", "plan", {}, _check_plan_greet, _solve_plan_greet, plan=_PLAN_GREET),
    Task("plan-fix-and-changelog", "plan",
         {"calc.py": _CALC, "test_calc.py": _TEST_CALC, "CHANGELOG.md": _CHANGELOG},
         _check_plan_fix, _solve_plan_fix, plan=_PLAN_FIX),
    Task("plan-notes", "plan", {"settings.py": _SETTINGS}, _check_plan_notes, _solve_plan_notes,
         plan=_PLAN_NOTES),
)
TASKS: tuple[Task, ...] = tuple(dataclasses.replace(t, check_cmd=_CHECKS[t.name]) for t in _TASKS)
