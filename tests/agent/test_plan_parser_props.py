"""``JsonPlanParser`` properties over generated answers: it never crashes, an answer cut off anywhere
never yields a step that was cut, and junk ``depends_on`` entries are dropped and reported one by one."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agcore.agent import JsonPlanParser, Plan, PlanParseError

PARSER = JsonPlanParser()

_words = st.text(alphabet=st.sampled_from("abcdefghij klmno 文件读取\"'\\{}[],:.-"), min_size=1, max_size=30)
_descriptions = st.lists(
    _words.map(str.strip).filter(lambda text: len(text.split()) >= 2 and "\\" not in text[-1:]),
    min_size=1, max_size=6, unique_by=lambda text: text.lower(),
)


_jsonish = st.text(alphabet=st.sampled_from('{}[]"\':,\\ \nabc1步骤`#=-steps'), max_size=200)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=300), _jsonish))
def test_any_text_is_a_plan_or_a_plan_parse_error(raw: str) -> None:
    error: PlanParseError | None = None
    try:
        plan = PARSER.parse_text(raw, "g")
    except PlanParseError as exc:
        error = exc
    if error is not None:
        assert error.raw == raw
        assert "Answer with only a JSON object" in error.message
    else:
        assert plan.steps
        assert all(step.description.strip() for step in plan.steps)


_SHAPES = ("objects", "strings", "numbered")
_CLOSERS = {"objects": "]}", "strings": "]", "numbered": "}"}


def _answer(descriptions: list[str], shape: str) -> str:
    """A model's plan of ``descriptions`` written in ``shape``."""
    if shape == "objects":
        value: object = {"goal": "g", "steps": [{"id": str(i), "description": d, "tool_hints": ["read_file"]}
                                                for i, d in enumerate(descriptions, 1)]}
    elif shape == "strings":
        value = descriptions
    else:
        value = {f"step{i}": d for i, d in enumerate(descriptions, 1)}
    return json.dumps(value, ensure_ascii=False)


def _whole_before(descriptions: list[str], shape: str, cut: int) -> int:
    """How many steps of the answer are written out whole in its first ``cut`` characters."""
    whole = 0
    for count in range(1, len(descriptions) + 1):
        if len(_answer(descriptions[:count], shape)) - len(_CLOSERS[shape]) <= cut:
            whole = count
    return whole


def _lines(descriptions: list[str]) -> list[str]:
    """The steps' text line by line, without the fences the parser puts around joined code lines."""
    return [line for text in descriptions for line in text.split("\n") if line != "```"]


def _check_cut(descriptions: list[str], shape: str, cut: int) -> None:
    """The answer cut at ``cut`` reads as the uncut answer holding only its whole steps, and says what
    was lost; the uncut answer reads as written, or with code lines joined (and said so)."""
    full = _answer(descriptions, shape)
    try:
        plan = PARSER.parse_text(full[:cut], "g")
    except PlanParseError:
        return
    got = [step.description for step in plan.steps]
    whole = _whole_before(descriptions, shape, cut)
    assert whole > 0, f"a step cut inside was read: {got}"
    expected = PARSER.parse_text(_answer(descriptions[:whole], shape), "g")
    assert got == [step.description for step in expected.steps]  # never a truncated description
    if whole < len(descriptions):
        assert any("cut off" in warning for warning in plan.warnings)  # what was lost is said
    if cut == len(full):
        assert _lines(got) == descriptions  # nothing lost, nothing reordered
        if got != descriptions:  # items shaped like lines of code join the step before them
            assert any("lines of code" in warning for warning in plan.warnings)
        else:
            assert plan.warnings == []


@settings(max_examples=150, deadline=None)
@given(_descriptions, st.sampled_from(_SHAPES), st.data())
def test_an_answer_cut_off_anywhere_never_yields_a_cut_step(
    descriptions: list[str], shape: str, data: st.DataObject
) -> None:
    cut = data.draw(st.integers(min_value=1, max_value=len(_answer(descriptions, shape))))
    _check_cut(descriptions, shape, cut)


@pytest.mark.parametrize(("descriptions", "shape"), [
    ([": [", ": :", ": {"], "numbered"),  # Hypothesis found it: ": :" was read as "Create x with:"
    ([": e]:", "o mei-{"], "strings"),
    (["Create main.c with:", "int main() {", "return 0;", "}", "Build it with make"], "strings"),
    (["Write the config:", "server {", "Reload nginx"], "numbered"),
])
def test_answers_found_by_the_property_read_right_at_every_cut(descriptions: list[str], shape: str) -> None:
    for cut in range(1, len(_answer(descriptions, shape)) + 1):
        _check_cut(descriptions, shape, cut)


def test_punctuation_ending_in_a_colon_introduces_no_code() -> None:
    plan = PARSER.parse_text(_answer([": [", ": :", ": {"], "numbered"), "g")
    assert [step.description for step in plan.steps] == [": [", ": :", ": {"]
    assert plan.warnings == []
    plan = PARSER.parse_text(_answer(["Create main.py with:", "main() {"], "strings"), "g")
    assert [step.description for step in plan.steps] == ["Create main.py with:\n```\nmain() {\n```"]


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=2, max_value=6), st.data())
def test_junk_dependencies_are_dropped_one_warning_each(size: int, data: st.DataObject) -> None:
    junk_values = st.sampled_from(["numpy", "", "0", "99", "pip install", "step 42", None])
    steps = []
    expected: list[list[str]] = []
    junk_count = 0
    for i in range(1, size + 1):
        good = [str(j) for j in range(1, i) if data.draw(st.booleans())]  # earlier steps only: no cycle
        junk = data.draw(st.lists(junk_values, max_size=2))
        self_ref = data.draw(st.booleans())
        junk_count += len(junk) + self_ref
        steps.append({"id": str(i), "description": f"Do part {i} of the work",
                      "depends_on": [*junk, *good, *([str(i)] if self_ref else [])]})
        expected.append(good)
    plan = PARSER.parse_text(json.dumps({"steps": steps}), "g")
    assert [step.depends_on for step in plan.steps] == expected
    assert len(plan.warnings) == junk_count
    assert Plan.from_json(plan.to_json()).steps == plan.steps


@pytest.mark.parametrize("raw", [
    "[" * 100_000,  # deeper than json.loads recurses
    "Text " + '["a" ' * 3000,  # unclosed brackets with strings: json-repair is quadratic on these
    "[" + '"a ' * 2600 + "]",
    "x " + "[" + '"a ' * 2600,
    '{"steps": [' + "{" * 5000,
    '```json\n{"steps": [' + ", ".join(f'"Run check {i}"' for i in range(3000)),  # long, cut off
])
def test_pathological_answers_are_refused_or_read_not_crashed(raw: str) -> None:
    error: PlanParseError | None = None
    try:
        plan = PARSER.parse_text(raw, "g")
    except PlanParseError as exc:
        error = exc
    if error is not None:
        assert error.problem
    else:  # only the long cut-off list is a plan: its last string closed, and it says it was cut
        assert plan.warnings == ["the answer was cut off after step 3000 (max_tokens?); the plan may be "
                                 "missing its last steps"]
        assert len(plan.steps) == 3000
