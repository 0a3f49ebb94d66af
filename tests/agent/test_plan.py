"""``Plan``/``Step`` loading and validation, and ``JsonPlanParser`` on a corpus of model answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agcore.agent import (
    AgentLLMError,
    JsonPlanParser,
    Plan,
    PlanParseError,
    PlanParser,
    Step,
    StepError,
    StepStatus,
)
from agcore.llm import AuthenticationError, RateLimitError

CORPUS = Path(__file__).parent / "plan_corpus"
EXAMPLES = Path(__file__).parents[2] / "examples" / "plans"


# ------------------------------------------------------------------------------ loaders


def test_bare_list_of_strings_gets_positional_ids() -> None:
    plan = Plan.from_dict(["Write the tests", "Run them"], goal="ship it")
    assert [(s.id, s.description, s.status) for s in plan.steps] == [
        ("1", "Write the tests", StepStatus.PENDING), ("2", "Run them", StepStatus.PENDING)
    ]
    assert plan.goal == "ship it"
    assert plan.id  # generated


def test_numeric_ids_and_dependencies_are_read_as_strings() -> None:
    plan = Plan.from_dict({"steps": [{"id": 1, "description": "a"}, {"id": 2, "description": "b",
                                                                      "depends_on": 1}]})
    assert plan.get("2").depends_on == ["1"]


def test_json_and_yaml_example_files_load() -> None:
    release = Plan.load(EXAMPLES / "release.json")
    assert release.id == "release-1.4"
    assert [s.id for s in release.steps] == ["changelog", "version", "notes", "announce"]
    assert release.get("announce").depends_on == ["notes", "version"]
    onboarding = Plan.load(EXAMPLES / "onboarding.yaml")
    assert onboarding.goal == "Onboard a new engineer to the payments team"
    assert [s.id for s in onboarding.steps] == ["1", "2", "3"]
    assert onboarding.get("2").depends_on == ["1"]
    assert onboarding.get("3").tool_hints == ["calendar"]


def test_yaml_text_loads_like_json() -> None:
    yaml_text = "id: p\ngoal: g\nsteps:\n  - first\n  - description: second\n    depends_on: [1]\n"
    json_text = '{"id": "p", "goal": "g", "steps": ["first", {"description": "second", "depends_on": ["1"]}]}'
    assert Plan.from_yaml(yaml_text) == Plan.from_json(json_text)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"steps": [{"description": "a"}, {"description": "b"}, {"description": "run tests",
                                                               "depends_on": ["7"]}]},
         "step 3 ('run tests'): depends_on refers to unknown step '7'"),
        ({"steps": [{"description": "a", "attempts": "many"}]}, "step 1 ('a'): attempts:"),
        ({"steps": [{"description": "a", "dependson": ["1"]}]},
         "step 1 ('a'): dependson: is not a step field"),
        ({"steps": [{"id": "x"}]}, "step 1 (id 'x'): description: is missing"),
        ({"steps": ["a", 5]}, "step 2: must be an object or a string, not int"),
        ({"steps": []}, "the plan has no steps"),
        ({"steps": ["a"], "owner": "me"}, "owner: is not a plan field"),
        ({"steps": [{"description": "a", "status": "failed"}]},
         "step 1 ('a'): status 'failed' needs an `error`"),
        ({"steps": [{"description": "a", "status": "finished"}]}, "step 1 ('a'): status:"),
        ({"steps": [{"id": "1", "description": "a"}, {"id": "1", "description": "b"}]},
         "steps 1 ('a') and 2 ('b') both have id '1'"),
    ],
)
def test_validation_errors_name_the_step_and_field(data: dict[str, Any], expected: str) -> None:
    with pytest.raises(PlanParseError) as caught:
        Plan.from_dict(data)
    assert expected in str(caught.value)
    assert caught.value.is_recoverable()


def test_cycles_are_rejected_naming_the_steps() -> None:
    with pytest.raises(PlanParseError, match="cycle") as caught:
        Plan.from_dict({"steps": [{"id": "a", "description": "x", "depends_on": ["b"]},
                                  {"id": "b", "description": "y", "depends_on": ["a"]},
                                  {"id": "c", "description": "z"}]})
    assert "step a ('x') -> step b ('y') -> step a ('x')" in str(caught.value)
    with pytest.raises(PlanParseError, match="cycle"):
        Plan.from_dict([{"id": "s", "description": "self", "depends_on": ["s"]}])


def test_file_errors_name_the_file_and_format(tmp_path: Path) -> None:
    bad = tmp_path / "plan.json"
    bad.write_text('{"steps": [', encoding="utf-8")
    with pytest.raises(PlanParseError, match=r"plan\.json: The plan is not valid JSON"):
        Plan.load(bad)
    yaml_file = tmp_path / "plan.yml"
    yaml_file.write_text("steps: [a, b\n", encoding="utf-8")
    with pytest.raises(PlanParseError, match="not valid YAML"):
        Plan.load(yaml_file)
    other = tmp_path / "plan.toml"
    other.write_text("", encoding="utf-8")
    with pytest.raises(PlanParseError, match=r"name it \.json, \.yaml or \.yml"):
        Plan.load(other)
    with pytest.raises(PlanParseError, match="not str"):
        Plan.from_yaml("just a sentence")


def test_json_round_trip_keeps_statuses() -> None:
    plan = Plan.from_dict({"id": "p", "goal": "g", "steps": ["a", "b", "c", "d"]})
    plan.steps[0].start()
    plan.steps[0].complete("done A")
    plan.steps[1].start()
    plan.steps[1].fail(AgentLLMError(RateLimitError("slow down")))
    plan.steps[2].skip("step 2 ('b') failed")
    plan.steps[3].start()
    again = Plan.from_json(plan.to_json())
    assert again == plan
    assert again.steps[0].result == "done A"
    error = again.steps[1].error
    assert error is not None
    assert error.recoverable
    assert error.type == "AgentLLMError"
    assert again.steps[2].skip_reason == "step 2 ('b') failed"
    assert again.steps[3].status is StepStatus.RUNNING
    assert again.steps[3].attempts == 1


def test_failed_step_error_records_recoverability() -> None:
    step = Step(id="1", description="call the API")
    step.fail(AgentLLMError(AuthenticationError("bad key")))
    assert step.error is not None
    assert not step.error.recoverable
    # A hand-written failed step may give its error as a plain message.
    loaded = Plan.from_dict([{"description": "x", "status": "failed", "error": "disk full"}])
    assert loaded.steps[0].error == StepError(message="disk full")


_step_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=30)


@settings(max_examples=50, deadline=None)
@given(st.lists(_step_text, min_size=1, max_size=8), st.data())
def test_any_valid_plan_round_trips_through_json(descriptions: list[str], data: st.DataObject) -> None:
    steps: list[dict[str, Any]] = []
    for i, description in enumerate(descriptions):
        earlier = [str(j + 1) for j in range(i)]
        deps = data.draw(st.lists(st.sampled_from(earlier), unique=True)) if earlier else []
        steps.append({"description": description, "depends_on": deps})
    plan = Plan.from_dict({"goal": "g", "steps": steps})
    assert Plan.from_json(plan.to_json()) == plan


# ------------------------------------------------------------------------------- parser


def _corpus() -> list[Path]:
    return sorted(CORPUS.glob("*.txt"))


def test_corpus_is_big_enough_and_every_case_has_its_expectation() -> None:
    cases = _corpus()
    assert len(cases) >= 75
    assert sum(1 for c in cases if not _expected(c)["ok"]) >= 20  # broken answers included
    assert sum(1 for c in cases if _expected(c).get("warnings_contain")) >= 20  # mended ones too
    assert {p.name for p in CORPUS.glob("*.expected.json")} == {c.stem + ".expected.json" for c in cases}


def _expected(case: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((CORPUS / (case.stem + ".expected.json")).read_text("utf-8"))
    return loaded


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("raw", "expected"),
    [pytest.param(c.read_text(encoding="utf-8"), _expected(c), id=c.stem) for c in _corpus()],
)
async def test_parser_corpus(raw: str, expected: dict[str, Any]) -> None:
    parser = JsonPlanParser()
    assert isinstance(parser, PlanParser)
    if not expected["ok"]:
        with pytest.raises(PlanParseError) as caught:
            await parser.parse(raw, "the goal")
        message = str(caught.value)
        for part in expected["error_contains"]:
            assert part in message
        assert "Answer with only a JSON object" in message  # the fix, for the model's second try
        assert caught.value.raw == raw
        return
    plan = await parser.parse(raw, "the goal")
    goal = expected.get("goal", "<given>")
    assert plan.goal == ("the goal" if goal == "<given>" else goal)
    assert len(plan.steps) == len(expected["steps"])
    for step, want in zip(plan.steps, expected["steps"], strict=True):
        assert step.id == want["id"]
        assert step.description == want["description"]
        assert step.depends_on == want.get("depends_on", [])
        if "tool_hints" in want:
            assert step.tool_hints == want["tool_hints"]
        assert step.status is StepStatus.PENDING  # whatever the model wrote
        assert step.attempts == 0
    # Every change the parser made is a warning the caller sees, and nothing else is.
    wanted = expected.get("warnings_contain", [])
    assert len(plan.warnings) == len(wanted), plan.warnings
    for warning, part in zip(plan.warnings, wanted, strict=True):
        assert part in warning


@pytest.mark.anyio
async def test_parser_caps_the_number_of_steps() -> None:
    raw = json.dumps({"steps": [f"step {i}" for i in range(12)]})
    assert len((await JsonPlanParser().parse(raw, "g")).steps) == 12
    with pytest.raises(PlanParseError, match="12 steps, more than the 10 allowed"):
        await JsonPlanParser(max_steps=10).parse(raw, "g")


@pytest.mark.anyio
async def test_parser_prefers_the_fenced_plan_over_json_in_prose() -> None:
    raw = ('The config looks like {"debug": true}.\n```json\n{"steps": ["Turn debug off", "Restart"]}\n```')
    plan = await JsonPlanParser().parse(raw, "g")
    assert [s.description for s in plan.steps] == ["Turn debug off", "Restart"]


def test_yaml_without_pyyaml_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    real = importlib.import_module

    def no_yaml(name: str, package: str | None = None) -> Any:
        if name == "yaml":
            raise ImportError("No module named 'yaml'")
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", no_yaml)
    with pytest.raises(PlanParseError, match=r"needs PyYAML, which is not installed: `pip install pyyaml`"):
        Plan.from_yaml("steps: [a]")
    assert Plan.from_json('["a"]').steps[0].description == "a"  # JSON plans need nothing extra
