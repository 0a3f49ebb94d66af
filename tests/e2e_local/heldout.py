"""Twelve held-out tasks: the same kinds as ``tasks.py`` (ten through the CLI, two plans), with other
files, names and wording, written after agcore's runtime help for small models was built and never
used to tune it. What the suite's figures are worth beyond its own thirteen tasks is what agcore does
here (``AGCORE_E2E_SET=heldout``; the peers bench's ``--set heldout``).

Each task's judge (``check``) and acceptance check (``check_cmd``) follow ``tasks.py``'s rules: the
judge reads the workspace and, for a question, the answer after the last tool result; the check
passes only where the judge does (a file the facts come from is kept, a path is the exact one) and
names no value the model must find itself. ``answer`` is a question's reference answer, which the
offline tests give the judge and the check in place of a model.
"""

from __future__ import annotations

import dataclasses
import json
import re
import tomllib
from pathlib import Path

from tests.e2e_local.tasks import (
    Check,
    Outcome,
    Task,
    _holds,
    _kept,
    _read,
    _renamed,
    _sha,
    _tests_pass,
    _unchanged,
    _works_and_tested,
    final_answer,
)

__all__ = ["HELDOUT"]


def _nothing(root: Path) -> None:
    pass  # a question: the answer is the model's (the tests give the reference ``answer``)


# ----------------------------------------------------------------------------- explain a function

_PRICING = '''
    def discount(total):
        """The share taken off an order's total."""
        if total >= 250:
            return 0.15
        if total >= 100:
            return 0.05
        return 0.0
'''
# the rate as a fraction or a percentage, not a digit of a longer number ("15%" is not "5%")
_RATE = r"(?<![\d.])(?:0?\.05|5(?:\.0)? ?%|5 percent)(?![\d])"


def _check_pricing(root: Path, outcome: Outcome) -> Check:
    if not re.search(_RATE, final_answer(outcome.output).lower()):
        return Check(False, "the answer does not give the 5% discount pricing.py computes for 180")
    return Check(True)


# ---------------------------------------------------------------------------------- count words

_POEM = """
    The river bends where the willows lean,
    and evening settles, slow and green;
    a heron waits on one grey leg
    beside the stones the waters beg.
"""


def _check_words(root: Path, outcome: Outcome) -> Check:
    return _holds(root, "words.txt", "26")


def _solve_words(root: Path) -> None:
    words = len((root / "poem.txt").read_text(encoding="utf-8").split())
    (root / "words.txt").write_text(f"{words}\n", encoding="utf-8")


# ---------------------------------------------------------------------------------- create json

def _check_json(root: Path, outcome: Outcome) -> Check:
    text = _read(root, "settings.json")
    if text is None:
        return Check(False, "settings.json was not created")
    try:
        value = json.loads(text)
    except ValueError:
        return Check(False, "settings.json is not JSON")
    if value != {"debug": True, "level": 3}:
        return Check(False, f"settings.json holds {text.strip()[:60]!r}")
    return Check(True)


def _solve_json(root: Path) -> None:
    (root / "settings.json").write_text('{"debug": true, "level": 3}\n', encoding="utf-8")


# ------------------------------------------------------------------------------- fix off by one

_RANGES = '''
    def last_n(items, n):
        """The last n items of items, in order."""
        return items[-n - 1:]
'''
_TEST_RANGES = """
    from ranges import last_n


    def test_last_two():
        assert last_n([1, 2, 3, 4], 2) == [3, 4]


    def test_last_one():
        assert last_n(["a", "b", "c"], 1) == ["c"]
"""


def _check_ranges(root: Path, outcome: Outcome) -> Check:
    return _unchanged(root, "test_ranges.py", _TEST_RANGES) or _tests_pass(root, "test_ranges.py")


def _solve_ranges(root: Path) -> None:
    path = root / "ranges.py"
    path.write_text(path.read_text(encoding="utf-8").replace("[-n - 1:]", "[-n:]"), encoding="utf-8")


# ---------------------------------------------------------------------------- add a method + test

_SHAPES = """
    class Rect:
        def __init__(self, width, height):
            self.width = width
            self.height = height

        def perimeter(self):
            return 2 * (self.width + self.height)
"""
_TEST_SHAPES = """
    from shapes import Rect


    def test_perimeter():
        assert Rect(2, 5).perimeter() == 14
"""


def _check_area(root: Path, outcome: Outcome) -> Check:
    return _works_and_tested(root, "from shapes import Rect; assert Rect(3, 4).area() == 12; "
                                   "assert Rect(2, 5).perimeter() == 14",
                             "Rect.area (or the perimeter it kept)", "test_shapes.py", "test_area")


def _solve_area(root: Path) -> None:
    with (root / "shapes.py").open("a", encoding="utf-8") as out:
        out.write("\n    def area(self):\n        return self.width * self.height\n")
    with (root / "test_shapes.py").open("a", encoding="utf-8") as out:
        out.write("\n\ndef test_area():\n    assert Rect(3, 4).area() == 12\n")


# ---------------------------------------------------------------------------- rename a constant

_LIMITS = """
    MAX_ITEMS = 50


    def clamp(count):
        return min(count, MAX_ITEMS)
"""
_CART = """
    from limits import MAX_ITEMS, clamp


    def room_left(count):
        return MAX_ITEMS - clamp(count)
"""


def _check_constant(root: Path, outcome: Outcome) -> Check:
    return _renamed(root, ("limits.py", "cart.py"), "MAX_ITEMS",
                    "import cart, limits; assert limits.ITEM_LIMIT == 50; "
                    "assert cart.room_left(20) == 30 and cart.room_left(80) == 0",
                    "limits.ITEM_LIMIT or cart.room_left")


def _solve_constant(root: Path) -> None:
    for name in ("limits.py", "cart.py"):
        path = root / name
        path.write_text(path.read_text(encoding="utf-8").replace("MAX_ITEMS", "ITEM_LIMIT"), encoding="utf-8")


# ---------------------------------------------------------------------------------- edit toml

_TOML = """
    [db]
    host = "db.internal"
    port = 5432

    [cache]
    ttl = 60
    size = 128
"""


def _check_toml(root: Path, outcome: Outcome) -> Check:
    try:
        data = tomllib.loads(_read(root, "settings.toml") or "")
    except tomllib.TOMLDecodeError as exc:
        return Check(False, f"settings.toml no longer parses: {exc}"[:160])
    if data.get("cache", {}).get("ttl") != 300:
        return Check(False, f"cache.ttl is {data.get('cache', {}).get('ttl')!r}, not 300")
    if data != {"db": {"host": "db.internal", "port": 5432}, "cache": {"ttl": 300, "size": 128}}:
        return Check(False, "other settings of settings.toml were lost or changed")
    return Check(True)


def _solve_toml(root: Path) -> None:
    path = root / "settings.toml"
    path.write_text(path.read_text(encoding="utf-8").replace("ttl = 60", "ttl = 300"), encoding="utf-8")


# ----------------------------------------------------------------------------------- find a caller

_JOBS = {
    "mail/send.py": "def send_mail(to, body):\n    return (to, body)\n",
    "jobs/cleanup.py": "import shutil\n\n\ndef clean(path):\n    shutil.rmtree(path)\n",
    "jobs/report.py": "from mail.send import send_mail\n\n\ndef nightly(rows):\n"
                      "    return send_mail('ops@example.com', str(len(rows)))\n",
    "jobs/backup.py": "def backup(path):\n    return path + '.bak'\n",
}
_CALLER = "jobs/report.py"


def _check_caller(root: Path, outcome: Outcome) -> Check:
    text = _read(root, "caller.txt")
    if text is None:
        return Check(False, "caller.txt was not written")
    if text.strip().strip("`'\"").removeprefix("./") != _CALLER:
        return Check(False, f"caller.txt holds {text.strip()[:60]!r}, not {_CALLER}")
    return Check(True)


def _solve_caller(root: Path) -> None:
    (root / "caller.txt").write_text(f"{_CALLER}\n", encoding="utf-8")


# ------------------------------------------------------------------------------- run a script

_STATS = """
    values = [4, 8, 15, 16, 23, 42]
    print("count", len(values))
    print("sum", sum(values))
    print("mean", sum(values) / len(values))
"""


def _check_last_line(root: Path, outcome: Outcome) -> Check:
    return _holds(root, "result.txt", "mean 18.0", "the last line stats.py prints")


def _solve_last_line(root: Path) -> None:
    (root / "result.txt").write_text("mean 18.0\n", encoding="utf-8")


# ------------------------------------------------------------------------------- append a line

_TO_DO_LIST = """
    # To do

    - tag the release
    - update the changelog
"""
_NEW_ITEM = "- write the release notes"


def _check_todo(root: Path, outcome: Outcome) -> Check:
    text = _read(root, "todo.md")
    if text is None:
        return Check(False, "todo.md is gone")
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    if lines != ["# To do", "- tag the release", "- update the changelog", _NEW_ITEM]:
        return Check(False, f"todo.md's lines are {lines[:6]}")
    return Check(True)


def _solve_todo(root: Path) -> None:
    with (root / "todo.md").open("a", encoding="utf-8") as out:
        out.write(_NEW_ITEM + "\n")


# ------------------------------------------------------------------------------------- plans

_PLAN_SLUG = """
    goal: A slugify function with a passing test
    steps:
      - id: code
        description: >-
          Create the file textutil.py defining a function slugify(text) that returns the words of
          text in lower case joined by "-" (for example slugify("Hello World") returns "hello-world").
        tool_hints: [write_file]
      - id: test
        description: >-
          Create the file test_textutil.py with a pytest test function test_slugify that imports
          slugify from textutil and asserts slugify("Hello World") == "hello-world".
        depends_on: [code]
        tool_hints: [write_file]
      - id: run
        description: Run the command `python -m pytest -q test_textutil.py` and report whether it passed.
        depends_on: [test]
        tool_hints: [run_command]
"""


def _check_plan_slug(root: Path, outcome: Outcome) -> Check:
    return _works_and_tested(root, "from textutil import slugify; assert slugify('Hello World') == "
                                   "'hello-world'; "
                                   "assert slugify('Agent Kernel Core') == 'agent-kernel-core'",
                             "textutil.slugify", "test_textutil.py", "test_slugify")


def _solve_plan_slug(root: Path) -> None:
    (root / "textutil.py").write_text('def slugify(text):\n    return "-".join(text.lower().split())\n',
                                      encoding="utf-8")
    (root / "test_textutil.py").write_text(
        "from textutil import slugify\n\n\ndef test_slugify():\n"
        "    assert slugify('Hello World') == 'hello-world'\n", encoding="utf-8")


_SCORES = """
    name,score
    ada,71
    grace,93
    linus,64
    barbara,88
    ken,79
"""
_PLAN_SCORES = """
    goal: Summarise scores.csv
    steps:
      - id: read
        description: Read scores.csv.
        tool_hints: [read_file]
      - id: write
        description: >-
          Write the file summary.md with two lines: "best: NAME" with the name of the highest
          score, and "count: N" with the number of people in scores.csv.
        depends_on: [read]
        tool_hints: [write_file]
"""


def _check_plan_scores(root: Path, outcome: Outcome) -> Check:
    summary = _read(root, "summary.md")
    if summary is None:
        return Check(False, "summary.md was not written")
    text = summary.lower()
    if not re.search(r"best:\s*grace\b", text) or not re.search(r"count:\s*5\b", text):
        return Check(False, f"summary.md holds {summary.strip()[:60]!r}")
    return Check(True)


def _solve_plan_scores(root: Path) -> None:
    (root / "summary.md").write_text("best: grace\ncount: 5\n", encoding="utf-8")


# ------------------------------------------------------------------------ the checks, as commands

_CHECKS = {
    "explain-function": f"{_kept('pricing.py', _PRICING)} && python -c \"import re, sys; "
                        "from pricing import discount; rate = discount(180); "
                        "answer = sys.stdin.read().lower(); percent = str(round(rate * 100)); "
                        "pattern = re.escape(str(rate)).replace('0', '0?', 1) + '|' + percent + "
                        "'(?:[.]0)? ?%|' + percent + ' percent'; "
                        "assert re.search('(?<![0-9.])(?:' + pattern + ')(?![0-9])', answer), "
                        "'the answer does not give the discount pricing.py computes'\"",
    "count-words": f"{_kept('poem.txt', _POEM)} && python -c \"assert open('words.txt').read().strip() == "
                   "str(len(open('poem.txt').read().split()))\"",
    "create-json": "python -c \"import json; assert json.load(open('settings.json')) == "
                   "{'debug': True, 'level': 3}\"",
    "fix-off-by-one": f"python -m pytest -q test_ranges.py && {_kept('test_ranges.py', _TEST_RANGES)}",
    "add-method-and-test": "python -c \"from shapes import Rect; assert Rect(3, 4).area() == 12; "
                           "assert Rect(2, 5).perimeter() == 14\" && grep -q 'def test_area' test_shapes.py "
                           "&& python -m pytest -q test_shapes.py",
    "rename-constant": "python -c \"import cart, limits; "
                       "assert 'MAX_ITEMS' not in open('limits.py').read() + open('cart.py').read(); "
                       "assert limits.ITEM_LIMIT == 50; "
                       "assert cart.room_left(20) == 30 and cart.room_left(80) == 0\"",
    "edit-toml": "python -c \"import tomllib; data = tomllib.load(open('settings.toml', 'rb')); "
                 "assert data['cache']['ttl'] == 300; assert data == {'db': {'host': 'db.internal', "
                 "'port': 5432}, 'cache': {'ttl': 300, 'size': 128}}\"",
    "find-caller": "python -c \"import hashlib, pathlib; "
                   "path = pathlib.Path(open('caller.txt').read().strip()); "
                   "assert 'send_mail(' in path.read_text(); assert hashlib.sha256(path.as_posix().encode())"
                   f".hexdigest()[:16] == '{_sha(_CALLER)}', 'not the file that calls it'\"",
    "run-script": f"{_kept('stats.py', _STATS)} && python -c \"import subprocess, sys; printed = "
                  "subprocess.run([sys.executable, 'stats.py'], capture_output=True, text=True).stdout; "
                  "assert open('result.txt').read().strip() == printed.strip().splitlines()[-1]\"",
    "append-todo": "python -c \"lines = [x.rstrip() for x in open('todo.md').read().splitlines() "
                   "if x.strip()]; "
                   "assert lines == ['# To do', '- tag the release', '- update the changelog', "
                   f"'{_NEW_ITEM}']\"",
    "plan-slugify": "python -c \"from textutil import slugify; "
                    "assert slugify('Hello World') == 'hello-world'; "
                    "assert slugify('Agent Kernel Core') == 'agent-kernel-core'\" && "
                    "grep -q 'def test_slugify' test_textutil.py && python -m pytest -q test_textutil.py",
    "plan-scores": f"{_kept('scores.csv', _SCORES)} && "
                   "python -c \"import csv, re; rows = list(csv.DictReader(open('scores.csv'))); "
                   "best = max(rows, key=lambda r: int(r['score']))['name']; "
                   "text = open('summary.md').read().lower(); assert re.search('best:[ ]*' + best + "
                   "'(?![a-z0-9_])', text); "
                   "assert re.search('count:[ ]*' + str(len(rows)) + '(?![0-9])', text)\"",
}

_TASKS: tuple[Task, ...] = (
    Task("explain-function", "cli", {"pricing.py": _PRICING}, _check_pricing, _nothing,
         prompt="Read pricing.py and say in one or two sentences what discount an order total of 180 gets.",
         answer="An order of 180 gets a 5% discount (0.05): 100 or more but under 250."),
    Task("count-words", "cli", {"poem.txt": _POEM}, _check_words, _solve_words,
         prompt="Count the words in poem.txt and write just that number into a new file words.txt."),
    Task("create-json", "cli", {}, _check_json, _solve_json,
         prompt='Create a file settings.json holding a JSON object with the key "debug" set to true and '
                'the key "level" set to 3.'),
    Task("fix-off-by-one", "cli", {"ranges.py": _RANGES, "test_ranges.py": _TEST_RANGES},
         _check_ranges, _solve_ranges,
         prompt="`python -m pytest -q test_ranges.py` fails. Fix the bug in ranges.py without changing "
                "test_ranges.py, and run the tests to check."),
    Task("add-method-and-test", "cli", {"shapes.py": _SHAPES, "test_shapes.py": _TEST_SHAPES},
         _check_area, _solve_area,
         prompt="Add a method area() to the class Rect in shapes.py that returns width * height, add a "
                "test test_area for it to test_shapes.py, then run `python -m pytest -q` to check."),
    Task("rename-constant", "cli", {"limits.py": _LIMITS, "cart.py": _CART}, _check_constant, _solve_constant,
         prompt="Rename the constant MAX_ITEMS to ITEM_LIMIT in limits.py and in every file that uses it."),
    Task("edit-toml", "cli", {"settings.toml": _TOML}, _check_toml, _solve_toml,
         prompt="In settings.toml set the cache ttl to 300; keep everything else as it is."),
    Task("find-caller", "cli", _JOBS, _check_caller, _solve_caller,
         prompt="Which file in the jobs directory calls send_mail? Write its path, relative to the "
                "workspace, into caller.txt (just the path)."),
    Task("run-script", "cli", {"stats.py": _STATS}, _check_last_line, _solve_last_line,
         prompt="Run `python stats.py` and write only the last line it prints into result.txt."),
    Task("append-todo", "cli", {"todo.md": _TO_DO_LIST}, _check_todo, _solve_todo,
         prompt=f'Add the item "{_NEW_ITEM}" at the end of todo.md, keeping the items already there.'),
    Task("plan-slugify", "plan", {}, _check_plan_slug, _solve_plan_slug, plan=_PLAN_SLUG),
    Task("plan-scores", "plan", {"scores.csv": _SCORES}, _check_plan_scores, _solve_plan_scores,
         plan=_PLAN_SCORES),
)
HELDOUT: tuple[Task, ...] = tuple(dataclasses.replace(t, check_cmd=_CHECKS[t.name]) for t in _TASKS)
