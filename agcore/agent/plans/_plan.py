"""``Plan``, ``Step`` and ``StepStatus``: a goal broken into steps a ``TaskAgent`` runs one turn each.

A plan comes from the model (``JsonPlanParser``) or from outside: ``Plan.load("plan.yaml")``,
``Plan.from_json(text)``, ``Plan.from_yaml(text)``, ``Plan.from_dict(data)``. The data is either
``{"id": ..., "goal": ..., "steps": [...]}`` or a bare list of steps; a step is an object
(``id``, ``description``, ``tool_hints``, ``depends_on``, ``agent`` (a sub-agent to delegate it to),
``check`` (commands that must pass before it counts as done; the plan may have its own ``check``),
and for a plan saved mid-run ``status``, ``attempts``, ``result``, ``error``, ``skip_reason``) or
just its description as a string.
Step ids default to their position ("1", "2", ...); numeric ids are read as strings.

Every loader raises ``PlanParseError`` naming the step and field that are wrong, e.g.
``step 3 ('run tests'): depends_on refers to unknown step '7'``; ``depends_on`` cycles are rejected.
A plan round-trips through JSON (``plan.to_json()`` / ``Plan.from_json``), statuses included, which
is how a run is persisted and resumed.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, Self

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from agcore._clock import new_id
from agcore.agent._errors import AgentError, PlanParseError

__all__ = ["Plan", "Step", "StepError", "StepStatus"]


class StepStatus(StrEnum):
    """Where a step is. ``completed`` carries ``Step.result``; ``failed`` carries ``Step.error``;
    ``skipped`` carries ``Step.skip_reason``."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"


class StepError(BaseModel):
    """Why a step failed: the error's message, its class name, and whether a retry may succeed."""

    model_config = ConfigDict(extra="forbid")

    message: str
    type: str = "AgentError"
    recoverable: bool = False
    #: The acceptance check that failed the step, and how (``exit 1``): ``type`` is ``ChecksFailed``.
    check: str | None = None
    check_status: str | None = None

    @classmethod
    def from_error(cls, error: AgentError) -> StepError:
        """The ``StepError`` of an ``AgentError``: its message, class name and ``is_recoverable()``."""
        return cls(message=str(error), type=type(error).__name__, recoverable=error.is_recoverable())


class Step(BaseModel):
    """One step of a plan. ``attempts`` counts the turns run for it (retries and resumes included);
    ``last_error`` is why the attempt before the current one failed, when it did (a retry's reason)."""

    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    id: str
    description: str = Field(min_length=1)
    tool_hints: list[str] = Field(default_factory=list)
    depends_on: list[str] = Field(default_factory=list)
    attempts: int = Field(default=0, ge=0)
    status: StepStatus = StepStatus.PENDING
    result: str | None = None
    error: StepError | None = None
    skip_reason: str | None = None
    last_error: StepError | None = None
    #: The sub-agent this step is delegated to (a name in the task agent's ``subagents``); None: the
    #: session's own agent runs it.
    agent: str | None = None
    #: The name of the type the step's answer must validate into (a key of the task agent's
    #: ``output_types``); None: a free text answer.
    output_type: str | None = None
    #: The validated answer of a completed step with an ``output_type``, as JSON data (saved with the
    #: plan; ``DefaultTaskAgent.step_output`` gives it back typed).
    output: Any = None
    #: Commands that must pass (exit 0) before the step counts as done: a plan file's ``check:`` (a
    #: command or a list). They run when the step's agent says it is done (docs/checks.md).
    checks: list[str] = Field(default_factory=list, validation_alias=AliasChoices("check", "checks"))

    @field_validator("checks", mode="before")
    @classmethod
    def _check_list(cls, value: Any) -> Any:
        return _command_list(value)

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("depends_on", "tool_hints", mode="before")
    @classmethod
    def _text_list(cls, value: Any) -> Any:
        if isinstance(value, str | int) and not isinstance(value, bool):
            value = [value]
        if isinstance(value, list):
            return [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
        return value

    @field_validator("error", mode="before")
    @classmethod
    def _error_text(cls, value: Any) -> Any:
        return {"message": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _status_has_its_data(self) -> Self:
        if self.status is StepStatus.FAILED and self.error is None:
            raise ValueError("status 'failed' needs an `error` (its message)")
        if self.status is StepStatus.COMPLETED and self.result is None:
            self.result = ""
        return self

    @property
    def label(self) -> str:
        """``step 3 ('run tests')``: how messages name this step."""
        text = self.description if len(self.description) <= 60 else self.description[:57] + "..."
        return f"step {self.id} ({text!r})"

    @property
    def done(self) -> bool:
        """Whether the step is completed (its result is available to later steps)."""
        return self.status is StepStatus.COMPLETED

    # Transitions; the executor uses these, and so can a caller driving steps itself.
    def start(self) -> None:
        """Mark the step running for a new attempt (``attempts`` + 1); a previous failure moves to
        ``last_error``."""
        self.status = StepStatus.RUNNING
        self.attempts += 1
        if self.error is not None:  # the previous attempt failed (else keep what reset() kept)
            self.last_error = self.error
        self.result = self.error = self.skip_reason = None

    def complete(self, result: str) -> None:
        """Mark the step completed with ``result`` (the text later steps are given)."""
        self.status, self.result, self.error, self.skip_reason = StepStatus.COMPLETED, result, None, None

    def fail(self, error: AgentError | StepError) -> None:
        """Mark the step failed with ``error`` (an ``AgentError`` is recorded as its ``StepError``)."""
        self.error = error if isinstance(error, StepError) else StepError.from_error(error)
        self.status, self.result, self.skip_reason = StepStatus.FAILED, None, None

    def skip(self, reason: str) -> None:
        """Mark the step skipped, saying why in ``reason`` (e.g. a step it needs failed)."""
        self.status, self.skip_reason, self.result, self.error = StepStatus.SKIPPED, reason, None, None

    def reset(self) -> None:
        """Back to pending (its attempts kept, and why the last one failed), to be run again."""
        if self.error is not None:
            self.last_error = self.error
        self.status, self.result, self.error, self.skip_reason = StepStatus.PENDING, None, None, None


class Plan(BaseModel):
    """A goal and its steps, in the order they are listed (``depends_on`` may reorder execution).

    ``warnings`` says what ``JsonPlanParser`` changed to read a model's plan (a ``depends_on`` entry that
    named no step and was dropped, a step cut off by the answer's end, code lines joined to their step);
    it is empty for a plan loaded from a file, where such problems are errors."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=new_id)
    goal: str = ""
    steps: list[Step] = Field(min_length=1)
    warnings: list[str] = Field(default_factory=list)
    #: Commands that must pass once the last step is done: a plan file's ``check:`` (a command or a
    #: list). They run, after that step's own, when its agent says it is done (docs/checks.md).
    checks: list[str] = Field(default_factory=list, validation_alias=AliasChoices("check", "checks"))

    @field_validator("checks", mode="before")
    @classmethod
    def _check_list(cls, value: Any) -> Any:
        return _command_list(value)

    @model_validator(mode="after")
    def _steps_fit_together(self) -> Self:
        problem = structure_problem(self.steps)
        if problem is not None:
            raise ValueError(problem)
        return self

    # ---------------------------------------------------------------------------- loading

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | list[Any], *, goal: str | None = None) -> Plan:
        """A plan from parsed data: a mapping, or a bare list of steps. ``goal`` fills in a goal
        the data does not give. ``PlanParseError`` says which step and field are wrong."""
        if isinstance(data, list):
            data = {"steps": data}
        if not isinstance(data, Mapping):
            raise PlanParseError(
                f"A plan must be an object with `steps` or a list of steps, not {type(data).__name__}."
            )
        body = dict(data)
        if goal is not None and not body.get("goal"):
            body["goal"] = goal
        raw_steps = body.get("steps")
        if isinstance(raw_steps, list):
            body["steps"] = [_step_data(s, i) for i, s in enumerate(raw_steps)]
        try:
            return cls.model_validate(body)
        except ValidationError as exc:
            raise PlanParseError(
                "The plan is not valid: " + "; ".join(_describe(exc, body))
                + ". Fix the plan and load it again.",
                cause=exc,
            ) from None

    @classmethod
    def from_json(cls, text: str, *, goal: str | None = None) -> Plan:
        """A plan from JSON text (strict JSON: for a model's answer use ``JsonPlanParser``)."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise PlanParseError(f"The plan is not valid JSON: {exc}. Fix the JSON and load it again.",
                                 raw=text, cause=exc) from None
        return cls.from_dict(data, goal=goal)

    @classmethod
    def from_yaml(cls, text: str, *, goal: str | None = None, source: str | None = None) -> Plan:
        """A plan from YAML text (needs PyYAML: ``pip install pyyaml``); ``source`` names the text
        (a file name) in error positions."""
        try:
            yaml: Any = importlib.import_module("yaml")
        except ImportError as exc:
            raise PlanParseError(
                "Reading a YAML plan needs PyYAML, which is not installed: `pip install pyyaml`, or give "
                "the plan as JSON.", raw=text, cause=exc,
            ) from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            where = str(exc).replace('"<unicode string>"', f'"{source}"' if source else "the text")
            raise PlanParseError(f"The plan is not valid YAML: {where}. Fix the YAML and load it again.",
                                 raw=text, cause=exc) from None
        return cls.from_dict(data, goal=goal)

    @classmethod
    def load(cls, path: str | Path, *, goal: str | None = None) -> Plan:
        """A plan from a ``.json``, ``.yaml`` or ``.yml`` file (UTF-8)."""
        file = Path(path)
        suffix = file.suffix.lower()
        if suffix not in (".json", ".yaml", ".yml"):
            raise PlanParseError(
                f"Cannot tell the format of plan file {str(file)!r} from its extension {suffix!r}: "
                "name it .json, .yaml or .yml."
            )
        text = file.read_text(encoding="utf-8")
        try:
            if suffix == ".json":
                return cls.from_json(text, goal=goal)
            return cls.from_yaml(text, goal=goal, source=str(file))
        except PlanParseError as exc:
            raise PlanParseError(f"{file}: {exc.message}", raw=text, cause=exc.cause) from None

    def to_json(self, *, indent: int | None = None) -> str:
        """The plan as JSON, statuses and results included; ``Plan.from_json`` reads it back."""
        return self.model_dump_json(indent=indent)

    # ------------------------------------------------------------------------------ views

    def get(self, step_id: str) -> Step:
        """The step whose id is ``step_id``. Raises ``KeyError`` naming the plan's step ids if there is
        none."""
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(f"the plan has no step {step_id!r}; its steps are {[s.id for s in self.steps]}")

    def index_of(self, step_id: str) -> int:
        """The position of step ``step_id`` in ``steps``. Raises ``KeyError`` naming the plan's step ids if
        there is none."""
        for i, step in enumerate(self.steps):
            if step.id == step_id:
                return i
        raise KeyError(f"the plan has no step {step_id!r}; its steps are {[s.id for s in self.steps]}")

    def dependents(self, step_id: str) -> Iterator[Step]:
        """The steps that need ``step_id``, directly or through other steps."""
        needed = {step_id}
        changed = True
        found: list[Step] = []
        while changed:
            changed = False
            for step in self.steps:
                if step not in found and needed.intersection(step.depends_on):
                    found.append(step)
                    needed.add(step.id)
                    changed = True
        yield from (s for s in self.steps if s in found)

    @property
    def finished(self) -> bool:
        """Every step is completed, failed or skipped."""
        return all(s.status in _FINAL for s in self.steps)

    @property
    def succeeded(self) -> bool:
        """Every step is completed."""
        return all(s.done for s in self.steps)

    def checks_for(self, step: Step) -> list[str]:
        """The checks ``step``'s turn must pass: its own, then the plan's when it is the last step to
        run (every other step is completed)."""
        last = all(other.done for other in self.steps if other is not step)
        return [*step.checks, *(self.checks if last else [])]

    def check(self) -> None:
        """Raise ``PlanParseError`` if the steps no longer fit together (e.g. after editing them)."""
        problem = structure_problem(self.steps)
        if problem is not None:
            raise PlanParseError(f"The plan is not valid: {problem}.")


_FINAL = (StepStatus.COMPLETED, StepStatus.FAILED, StepStatus.SKIPPED)


def _command_list(value: Any) -> Any:
    """``check:`` as a list of command lines: one command alone is a list of one; none is refused."""
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and any(isinstance(c, str) and not c.strip() for c in value):
        raise ValueError("a check is an empty command; give the command line to run, e.g. 'pytest -q'")
    return value


def _step_data(raw: Any, index: int) -> Any:
    """A string becomes a step with that description; a missing id becomes the step's position."""
    if isinstance(raw, str):
        return {"id": str(index + 1), "description": raw}
    if isinstance(raw, Mapping) and raw.get("id") is None:
        return {**raw, "id": str(index + 1)}
    return raw


def structure_problem(steps: list[Step]) -> str | None:
    """What is wrong with how ``steps`` refer to each other (None when nothing is)."""
    seen: dict[str, Step] = {}
    for position, step in enumerate(steps, 1):
        if step.id in seen:
            first = steps.index(seen[step.id]) + 1
            return (f"steps {first} ({seen[step.id].description[:57]!r}) and {position} "
                    f"({step.description[:57]!r}) both have id {step.id!r}; give each step its own id")
        seen[step.id] = step
    for step in steps:
        for dep in step.depends_on:
            if dep not in seen:
                return f"{step.label}: depends_on refers to unknown step {dep!r} (the ids are {list(seen)})"
    # Depth-first search; a step met again while still on the path closes a cycle.
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(step_id: str) -> list[str] | None:
        state[step_id] = 1
        path.append(step_id)
        for dep in seen[step_id].depends_on:
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state and (cycle := visit(dep)) is not None:
                return cycle
        path.pop()
        state[step_id] = 2
        return None

    for step in steps:
        if step.id not in state and (cycle := visit(step.id)) is not None:
            chain = " -> ".join(seen[i].label for i in cycle)
            return f"depends_on forms a cycle: {chain} (each needs the next); remove one of the dependencies"
    return None


def _describe(exc: ValidationError, body: Mapping[str, Any]) -> list[str]:
    """Pydantic's errors as ``step 3 ('run tests'): attempts: ...``."""
    steps = body.get("steps")
    out: list[str] = []
    for error in exc.errors(include_url=False):
        loc = list(error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if len(loc) >= 2 and loc[0] == "steps" and isinstance(loc[1], int) and isinstance(steps, list):
            index = loc[1]
            raw = steps[index] if index < len(steps) else None
            where = f"step {index + 1}"
            if isinstance(raw, Mapping):
                if raw.get("id") is not None and str(raw["id"]) != str(index + 1):
                    where += f" (id {str(raw['id'])!r})"
                description = raw.get("description")
                if isinstance(description, str) and description:
                    where += f" ({description[:57]!r})"
            field = ".".join(str(part) for part in loc[2:])
            if error["type"] == "extra_forbidden":
                fields = ("check" if name == "checks" else name for name in Step.model_fields)
                message = "is not a step field (the fields are: " + ", ".join(fields) + ")"
            elif error["type"] == "missing":
                message = "is missing"
            elif field == "" and error["type"] in ("model_type", "model_attributes_type"):
                message = f"must be an object or a string, not {type(raw).__name__}"
            out.append(f"{where}: {field + ': ' if field else ''}{message}")
        else:
            field = ".".join(str(part) for part in loc)
            if error["type"] == "extra_forbidden":
                message = "is not a plan field (the fields are: id, goal, steps, check)"
            elif field == "steps" and error["type"] == "too_short":
                message = "the plan has no steps; give at least one"
            out.append(f"{field + ': ' if field else ''}{message}")
    return out
