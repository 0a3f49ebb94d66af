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


@settings(max_examples=150, deadline=None)
@given(_descriptions, st.data())
def test_an_answer_cut_off_anywhere_never_yields_a_cut_step(
    descriptions: list[str], data: st.DataObject
) -> None:
    shape = data.draw(st.sampled_from(["objects", "strings", "numbered"]))
    if shape == "objects":
        value: object = {"goal": "g", "steps": [{"id": str(i), "description": d, "tool_hints": ["read_file"]}
                                                for i, d in enumerate(descriptions, 1)]}
    elif shape == "strings":
        value = descriptions
    else:
        value = {f"step{i}": d for i, d in enumerate(descriptions, 1)}
    full = json.dumps(value, ensure_ascii=False)
    cut = data.draw(st.integers(min_value=1, max_value=len(full)))
    try:
        plan = PARSER.parse_text(full[:cut], "g")
    except PlanParseError:
        return
    got = [step.description for step in plan.steps]
    assert got == descriptions[: len(got)]  # whole steps, in order; never a truncated description
    if cut == len(full):
        assert got == descriptions
        assert plan.warnings == []
    elif len(got) < len(descriptions):
        assert plan.warnings  # what was lost is said


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
