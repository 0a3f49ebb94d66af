"""agcore's kernel: agents, the runtime bundle, sessions and their loop.

```python
from agcore.agent import AgentBuilder, BasicAgent, QuickAgent

result = QuickAgent(name="helper", model="anthropic:claude-haiku-4-5", tools=[read_file]).run_sync("…")

bundle = AgentBuilder().model("anthropic:claude-sonnet-4-6").tools(read_file).build()
agent = BasicAgent(name="helper", system_prompt="You help with the repository.")
```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agcore._lazy import lazy_dir, lazy_getattr
from agcore.agent._agent import Agent, BasicAgent, default_tool_definitions
from agcore.agent._answers import (
    CHECKED_BY_EFFECT_KEY,
    AnswerRequired,
    not_an_answer,
    restated_as_done,
    restates,
)
from agcore.agent._backend_names import LANGGRAPH_BACKEND, LOOP_BACKEND

# ---- end of session and loop exports ----
# What a runtime on the turn's steps works with (agcore.agent.steps, docs/runtimes.md): the batch of
# calls in flight, the turn's state, and the repairs a runtime applies to a history left mid-batch.
from agcore.agent._batch import (
    CANCELLED,
    UNANSWERED_CLIENT,
    Batch,
    CallOutcome,
    answer_open_calls,
    check_client_results,
    error_result,
)
from agcore.agent._builder import AgentBuilder
from agcore.agent._change_first import CHANGE_DUE_KEY, ChangeFirst
from agcore.agent._config import AgentConfig
from agcore.agent._cost import CostTracker
from agcore.agent._cycles import CycleTracker
from agcore.agent._errors import (
    AgentError,
    AgentLLMError,
    AgentMemoryError,
    AgentToolError,
    Cancelled,
    ConfigError,
    HookBlocked,
    NoAnswer,
    PlanParseError,
    UnreadableToolCalls,
)
from agcore.agent._events import (
    AgentEvent,
    AgentEventAdapter,
    AskedAgain,
    CheckFinished,
    CheckStarted,
    ClientToolsRequested,
    Done,
    Failed,
    ProviderSwitched,
    Steered,
    SubagentEvent,
    TextDelta,
    TextModeSwitched,
    ThinkingDelta,
    ToolCallRequested,
    ToolResultReady,
    TurnEnded,
    TurnStarted,
    TurnStop,
)
from agcore.agent._hands_off import HandsOff, hands_off_files
from agcore.agent._messages import (
    AgentMessage,
    AgentMessageAdapter,
    AssistantReply,
    ContextNote,
    Summary,
    SystemEvent,
    ToolLog,
    ToolResults,
    UserInput,
    convert_to_llm,
    messages_from_json,
    messages_to_json,
)
from agcore.agent._personas import PERSONAS, Persona, get_persona
from agcore.agent._prompt import DEFAULT_SAFETY_RULES, DEFAULT_TOOL_RULES, Environment, SystemPrompt
from agcore.agent._quick import AgentRunResult, QuickAgent
from agcore.agent._result import LimitExceeded
from agcore.agent._runaway import Runaway, RunawayOutput, find_runaway

# ---- session and loop exports (AgentSession, TurnResult, AgentEvent and the events) go below ----
from agcore.agent._session import (
    TURN_RUNNING,
    AgentSession,
    ConfirmCallback,
    ContextTransform,
    wait_until_closed,
)
from agcore.agent._tool_call_cap import tool_calls_notice
from agcore.agent._turn import TurnResult, TurnState
from agcore.agent._wrap_up import WrapUp, judged_answers
from agcore.agent.capability import Capability
from agcore.agent.output._output import OutputMode, OutputValidationError, StructuredOutput, resolve_output
from agcore.agent.session_like import SessionLike
from agcore.agent.session_state import SessionState

if TYPE_CHECKING:
    from agcore.agent._backends import ConversationSession, backend_names, check_backend, open_session
    from agcore.agent._bundle import (
        ProviderResolver,
        RuntimeBundle,
        bundle_resolve_provider,
        register_memory_tools,
        remember_tool,
        retrieve_tool,
    )
    from agcore.agent._memory_guidance import MemoryGuidancePlugin, memory_guidance
    from agcore.agent._persistence import INTERRUPTED
    from agcore.agent._skills import LOAD_SKILL_TOOL, SKILL_FILE, Skill, SkillError, Skills
    from agcore.agent.checks._acceptance import AcceptanceChecks, checks_for_turn, turn_checks
    from agcore.agent.checks._check_report import (
        CHECKS_KEY,
        CheckOutcome,
        CheckReport,
        ChecksFailed,
        check_report,
    )
    from agcore.agent.checks._claims import (
        CLAIMS_KEY,
        ClaimedChanges,
        ClaimNotBorneOut,
        UnbornClaim,
        claimed_files,
        unborn_claims,
    )
    from agcore.agent.checks._review import (
        REVIEW_KEY,
        REVIEW_PROMPT,
        AnswerReview,
        ReviewFailed,
        review_requests,
        review_verdict,
    )
    from agcore.agent.checks._review_brief import ReviewBrief
    from agcore.agent.plans._plan import Plan, Step, StepError, StepStatus
    from agcore.agent.plans._plan_approval import PlanApproval, PlanDecision, PlanRejected, settle_plan
    from agcore.agent.plans._plan_parser import JsonPlanParser, PlanParser
    from agcore.agent.plans._step_check import DefaultStepVerifier, StepVerifier
    from agcore.agent.plans._task_agent import (
        DEFAULT_PLAN_PROMPT,
        DEFAULT_REASK_PROMPT,
        PLAN_STATE_KEY,
        DefaultTaskAgent,
        FailurePolicy,
        PlanUpdate,
        TaskAgent,
    )
    from agcore.agent.subagents._subagent import (
        DEFAULT_MAX_DEPTH,
        DEFAULT_SUBAGENT_TIMEOUT,
        agent_tool,
        run_subagent,
        subagent_of,
        subagent_session_id,
    )
    from agcore.agent.subagents._subagent_store import list_subagent_sessions

from agcore.agent import checks as _checks
from agcore.agent import plans as _plans
from agcore.agent import subagents as _subagents

# Loaded on first use: the bundle (dependency-injector, which pulls in asyncio, yaml and, where
# installed, starlette) is needed once AgentBuilder.build() runs; plans and task agents by few runs.
_LAZY = {
    "ConversationSession": "agcore.agent._backends",
    "backend_names": "agcore.agent._backends",
    "check_backend": "agcore.agent._backends",
    "open_session": "agcore.agent._backends",
    "ProviderResolver": "agcore.agent._bundle",
    "RuntimeBundle": "agcore.agent._bundle",
    "bundle_resolve_provider": "agcore.agent._bundle",
    "register_memory_tools": "agcore.agent._bundle",
    "remember_tool": "agcore.agent._bundle",
    "retrieve_tool": "agcore.agent._bundle",
    "INTERRUPTED": "agcore.agent._persistence",
    "MemoryGuidancePlugin": "agcore.agent._memory_guidance",
    "memory_guidance": "agcore.agent._memory_guidance",
    "LOAD_SKILL_TOOL": "agcore.agent._skills",
    "SKILL_FILE": "agcore.agent._skills",
    "Skill": "agcore.agent._skills",
    "SkillError": "agcore.agent._skills",
    "Skills": "agcore.agent._skills",
    # the names of agcore.agent's feature packages, from their own maps (one list each)
    **_checks.EXPORTS,
    **_plans.EXPORTS,
    **_subagents.EXPORTS,
}

__all__ = [
    "INTERRUPTED",
    "LANGGRAPH_BACKEND",
    "LOOP_BACKEND",
    "DEFAULT_PLAN_PROMPT",
    "DEFAULT_REASK_PROMPT",
    "DEFAULT_SAFETY_RULES",
    "DEFAULT_TOOL_RULES",
    "PLAN_STATE_KEY",
    "Agent",
    "AgentBuilder",
    "AgentConfig",
    "AgentError",
    "AgentLLMError",
    "AgentMemoryError",
    "AgentMessage",
    "AgentMessageAdapter",
    "AgentRunResult",
    "AgentToolError",
    "AssistantReply",
    "BasicAgent",
    "Cancelled",
    "ConfigError",
    "ContextNote",
    "ConversationSession",
    "CostTracker",
    "DefaultStepVerifier",
    "DefaultTaskAgent",
    "Environment",
    "FailurePolicy",
    "HookBlocked",
    "JsonPlanParser",
    "LimitExceeded",
    "NoAnswer",
    "Plan",
    "PlanApproval",
    "PlanDecision",
    "PlanParseError",
    "PlanParser",
    "PlanRejected",
    "PlanUpdate",
    "ProviderResolver",
    "QuickAgent",
    "RuntimeBundle",
    "Step",
    "StepError",
    "StepStatus",
    "StepVerifier",
    "Summary",
    "SystemEvent",
    "SystemPrompt",
    "TaskAgent",
    "ToolLog",
    "ToolResults",
    "UnreadableToolCalls",
    "UserInput",
    "backend_names",
    "bundle_resolve_provider",
    "check_backend",
    "convert_to_llm",
    "default_tool_definitions",
    "messages_from_json",
    "messages_to_json",
    "open_session",
    "register_memory_tools",
    "remember_tool",
    "retrieve_tool",
    # ---- session and loop names go here ----
    "AgentEvent",
    "AgentEventAdapter",
    "AskedAgain",
    "AgentSession",
    "ClientToolsRequested",
    "ConfirmCallback",
    "ContextTransform",
    "Done",
    "Failed",
    "ProviderSwitched",
    "Steered",
    "TextDelta",
    "TextModeSwitched",
    "ThinkingDelta",
    "ToolCallRequested",
    "ToolResultReady",
    "TurnEnded",
    "TurnResult",
    "TurnStarted",
    "TurnStop",
    # ---- sub-agents ----
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_SUBAGENT_TIMEOUT",
    "SubagentEvent",
    "agent_tool",
    "list_subagent_sessions",
    "run_subagent",
    "subagent_of",
    "subagent_session_id",
    "OutputMode",
    "OutputValidationError",
    "StructuredOutput",
    "resolve_output",
    # ---- runtimes and capabilities on the turn's steps ----
    "CANCELLED",
    "UNANSWERED_CLIENT",
    "Batch",
    "CallOutcome",
    "Capability",
    "CycleTracker",
    "SessionLike",
    "SessionState",
    "TurnState",
    "answer_open_calls",
    "check_client_results",
    "error_result",
    "TURN_RUNNING",
    "wait_until_closed",
    # ---- acceptance checks ----
    "CHECKS_KEY",
    "AcceptanceChecks",
    "CheckFinished",
    "CheckOutcome",
    "CheckReport",
    "CheckStarted",
    "ChecksFailed",
    "check_report",
    "checks_for_turn",
    "turn_checks",
    "CLAIMS_KEY",
    "ClaimNotBorneOut",
    "ClaimedChanges",
    "UnbornClaim",
    "claimed_files",
    "unborn_claims",
    "REVIEW_KEY",
    "REVIEW_PROMPT",
    "AnswerReview",
    "ReviewBrief",
    "ReviewFailed",
    "review_requests",
    "review_verdict",
    # ---- skills, personas, memory guidance ----
    "LOAD_SKILL_TOOL",
    "PERSONAS",
    "SKILL_FILE",
    "MemoryGuidancePlugin",
    "Persona",
    "Skill",
    "SkillError",
    "Skills",
    "get_persona",
    "memory_guidance",
    # ---- gates: runaway replies, tool-call caps ----
    "Runaway",
    "RunawayOutput",
    "find_runaway",
    "tool_calls_notice",
    "WrapUp",
    "judged_answers",
    "AnswerRequired",
    "not_an_answer",
    "restated_as_done",
    "restates",
    "HandsOff",
    "hands_off_files",
    "ChangeFirst",
    "CHANGE_DUE_KEY",
    "CHECKED_BY_EFFECT_KEY",
    "settle_plan",
]


def __getattr__(name: str) -> Any:
    return lazy_getattr(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return lazy_dir(__name__, _LAZY)
