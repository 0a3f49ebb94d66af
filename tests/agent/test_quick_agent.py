"""``QuickAgent``: one object, one call. It builds the bundle and the session the three-object form
builds by hand, returns ``.output`` (typed or text) and ``.usage()`` (tokens and cost), raises a
failed turn's error, and is a ``BasicAgent`` a session takes unchanged. The README's quick start
runs as printed, with the scripted model the README offers for running it without a key."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from agcore.agent import (
    AgentBuilder,
    AgentLLMError,
    AgentRunResult,
    AgentSession,
    BasicAgent,
    ConfigError,
    QuickAgent,
    ToolResults,
)
from agcore.llm import AuthenticationError, clear_provider_cache
from agcore.llm import factory as llm_factory
from agcore.testing import ScriptedProvider, tool_call_reply
from agcore.tools import tool
from bench.fake_vendor import ANSWER_TEXT, FakeVendor

ROOT = Path(__file__).resolve().parents[2]


@tool
def get_weather(city: str, unit: str = "celsius") -> str:
    """Current weather for a city."""
    return f"{city}: 18°C, partly cloudy ({unit})"


def weather_script(answer: str = "18°C in Paris.") -> ScriptedProvider:
    return ScriptedProvider([tool_call_reply("get_weather", {"city": "Paris"}), answer],
                            model_id="claude-haiku-4-5")


class Forecast(BaseModel):
    city: str
    celsius: float


def test_run_sync_calls_the_tool_and_returns_the_answer_with_tokens_and_cost() -> None:
    model = weather_script()
    agent = QuickAgent(name="weather", provider=model, tools=[get_weather])

    result = agent.run_sync("What's the weather in Paris?")

    assert isinstance(result, AgentRunResult)
    assert result.output == result.text == "18°C in Paris."
    tool_results = [m for m in result.all_messages() if isinstance(m, ToolResults)]
    assert [r.text for r in tool_results[0].results] == ["Paris: 18°C, partly cloudy (celsius)"]
    usage = result.usage()
    assert usage.calls == 2
    assert usage.input_tokens > 0
    assert usage.output_tokens > 0
    assert usage.total_tokens == usage.usage.total_tokens >= usage.input_tokens + usage.output_tokens
    assert usage.cost_usd is not None
    assert usage.cost_usd > 0  # priced as claude-haiku-4-5
    assert [t.name for t in model.requests[0].tools] == ["get_weather"]


@pytest.mark.anyio
async def test_run_awaits_the_same_turn_on_either_event_loop() -> None:
    agent = QuickAgent(name="weather", provider=weather_script("sunny"), tools=[get_weather])
    result = await agent.run("Weather in Paris?")
    assert result.output == "sunny"
    assert result.turn.stop == "done"
    assert result.turn.turns == 2


def test_a_plain_function_is_a_tool_too() -> None:
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    model = ScriptedProvider([tool_call_reply("add", {"a": 2, "b": 3}), "5"])
    result = QuickAgent(name="calc", provider=model, tools=[add]).run_sync("2+3?")
    assert result.output == "5"
    assert model.requests[0].tools[0].name == "add"
    assert "5" in model.requests[1].messages[-1].blocks[0].model_dump_json()


def test_output_type_makes_output_a_validated_object() -> None:
    model = ScriptedProvider([tool_call_reply("final_result", {"city": "Paris", "celsius": 18})])
    result = QuickAgent(name="forecaster", provider=model, output_type=Forecast).run_sync("Paris?")
    assert result.output == Forecast(city="Paris", celsius=18)

    per_call = ScriptedProvider([tool_call_reply("final_result", {"city": "Oslo", "celsius": -2})])
    typed = QuickAgent(name="f", provider=per_call).run_sync("Oslo?", output_type=Forecast)
    assert typed.output == Forecast(city="Oslo", celsius=-2)


def test_message_history_continues_the_conversation() -> None:
    model = ScriptedProvider(["Hello Ada.", "Your name is Ada."])
    agent = QuickAgent(name="chat", provider=model)
    first = agent.run_sync("I am Ada.")
    second = agent.run_sync("What is my name?", message_history=first.all_messages())

    assert second.output == "Your name is Ada."
    seen = [m.model_dump()["role"] for m in model.requests[1].messages]
    assert seen == ["user", "assistant", "user"]
    assert len(second.all_messages()) == 4
    assert len(second.new_messages()) == 2
    assert first.session_id != second.session_id


def test_a_failed_turn_raises_its_error() -> None:
    agent = QuickAgent(name="weather", provider=ScriptedProvider([AuthenticationError("bad key")]))
    with pytest.raises(AgentLLMError, match="bad key"):
        agent.run_sync("hi")


@pytest.mark.parametrize(("options", "says"), [
    ({}, "has no model"),
    ({"model": "anthropic:claude-haiku-4-5", "provider": ScriptedProvider(["x"])},
     "both model= and provider="),
])
def test_no_model_or_two_is_a_config_error_saying_what_to_give(options: dict[str, object], says: str) -> None:
    with pytest.raises(ConfigError, match=says) as info:
        QuickAgent(name="weather", **options).run_sync("hi")  # type: ignore[arg-type]
    assert "model='anthropic:claude-haiku-4-5'" in str(info.value)
    assert info.value.piece == "provider"


def test_a_missing_key_is_the_builders_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        QuickAgent(name="weather", model="anthropic:claude-haiku-4-5").run_sync("hi")


def test_something_that_is_not_a_tool_is_refused_when_the_agent_is_made() -> None:
    with pytest.raises(ConfigError, match="was given 42 as a tool"):
        QuickAgent(name="weather", tools=[42])  # type: ignore[list-item]


@pytest.mark.anyio
async def test_run_sync_inside_an_event_loop_says_to_await_run() -> None:
    agent = QuickAgent(name="weather", provider=ScriptedProvider(["x"]))
    with pytest.raises(RuntimeError, match=r"await agent.run\(\.\.\.\)"):
        agent.run_sync("hi")


@pytest.mark.anyio
async def test_the_same_agent_grows_into_a_session_with_a_bundle() -> None:
    agent = QuickAgent(name="weather", model="anthropic:claude-haiku-4-5", tools=[get_weather])
    bundle = AgentBuilder().provider(weather_script()).tools(get_weather).build()
    session = AgentSession(agent, "s-1", bundle)  # the bundle's model runs, not the agent's
    result = await session.submit_turn("Weather?")
    assert result.text == "18°C in Paris."
    assert session.usage.total_tokens == result.usage.total_tokens > 0


@pytest.mark.anyio
async def test_a_basic_agent_offers_tool_objects_by_name_and_needs_them_in_the_bundle() -> None:
    agent = BasicAgent(name="weather", tools=[get_weather])
    empty = AgentBuilder().provider(ScriptedProvider(["x"])).build()
    with pytest.raises(ConfigError, match="offers the tool 'get_weather'"):
        agent.tool_definitions(empty)
    full = AgentBuilder().provider(ScriptedProvider(["x"])).tools(get_weather).build()
    assert [d.name for d in agent.tool_definitions(full)] == ["get_weather"]


@pytest.fixture
def vendor(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeVendor]:
    with FakeVendor() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.anthropic_base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
        yield server
    clear_provider_cache()


def test_a_model_spec_runs_against_the_vendor_api_and_each_run_gives_its_client_back(
    vendor: FakeVendor,
) -> None:
    agent = QuickAgent(name="weather", model="anthropic:claude-haiku-4-5", tools=[get_weather])
    for _ in range(2):  # each run_sync has an event loop of its own: a client is never carried over
        result = agent.run_sync("Weather in Paris?")
        assert result.output == ANSWER_TEXT
        assert result.usage().cost_usd is not None
    assert all(getattr(p, "closed", True) for p in llm_factory._cache.values())
    assert sum(1 for _, path, _, _ in vendor.requests if path.endswith("/messages")) == 4


def _readme_quick_start() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Quick start"):readme.index("## The command line")]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)
    (offline,) = re.findall(r"`(provider=ScriptedProvider\(.*?\))`", section, flags=re.DOTALL)
    model = 'model="anthropic:claude-haiku-4-5"'
    assert model in code, "the README's quick start no longer names the model this test swaps"
    # What the README tells a reader without a key to do: give the agent that provider instead.
    return "from agcore.testing import ScriptedProvider, tool_call_reply\n" + code.replace(model, offline)


def test_the_readmes_quick_start_runs_as_printed_with_the_scripted_model(tmp_path: Path) -> None:
    script = tmp_path / "quick_start.py"
    script.write_text(_readme_quick_start(), encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    answer, figures = done.stdout.splitlines()
    assert answer == "18°C in Paris."
    tokens, cost = figures.split()
    assert int(tokens) > 0
    assert cost == "None"  # a scripted model has no price (ScriptedProvider(model_id=...) gives one)


GETTING_STARTED = ROOT / "docs" / "getting-started.md"
WEATHER_SCRIPT = ('provider=ScriptedProvider([tool_call_reply("get_weather", {"city": "Paris"}), '
                  '"18°C in Paris."], model_id="claude-haiku-4-5")')
TYPED_SCRIPT = ('provider=ScriptedProvider([tool_call_reply("final_result", '
                '{"city": "Paris", "celsius": 18})])')
#: What each Python block of the page needs to run offline: (text on the page, its stand-in).
OFFLINE = [
    [('model="anthropic:claude-haiku-4-5"', WEATHER_SCRIPT)],
    [('model="anthropic:claude-haiku-4-5"', TYPED_SCRIPT)],
    [('.model("anthropic:claude-haiku-4-5")', f".{WEATHER_SCRIPT.replace('provider=', 'provider(')})")],
    [],  # the page's own scripted model
]


def test_the_getting_started_page_runs_as_printed_on_scripted_models(
    capsys: pytest.CaptureFixture[str],
) -> None:
    blocks = re.findall(r"```python\n(.*?)```", GETTING_STARTED.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert len(blocks) == len(OFFLINE), "a block was added to the page: say here how it runs offline"
    namespace: dict[str, object] = {}
    for block, swaps in zip(blocks, OFFLINE, strict=True):
        code = "from agcore.testing import ScriptedProvider, tool_call_reply\n" + block
        for text, stand_in in swaps:
            assert text in code, f"the page no longer says {text}"
            code = code.replace(text, stand_in)
        exec(compile(code, str(GETTING_STARTED), "exec"), namespace)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "18°C in Paris."  # the QuickAgent's answer
    input_tokens, output_tokens, total, cost = out[1].split()
    assert int(total) >= int(input_tokens) + int(output_tokens) > 0
    assert float(cost) > 0
    assert out[2] == "18.0"  # the typed answer
    assert out[3] == "18°C in Paris."  # the three-object form's
    assert out[4].startswith("done 2 ")


def test_a_quick_agent_as_a_sub_agent_runs_on_its_own_model_and_tools() -> None:
    @tool
    def lookup(term: str) -> str:
        """Look a term up."""
        return f"{term}: a city in France"

    child_model = ScriptedProvider([tool_call_reply("lookup", {"term": "Paris"}), "Paris is in France."])
    researcher = QuickAgent(name="researcher", system_prompt="You research.", tools=[lookup],
                            provider=child_model)
    lead_model = ScriptedProvider([tool_call_reply("researcher", {"task": "What is Paris?"}),
                                   "The researcher says Paris is in France."])
    lead = QuickAgent(name="lead", provider=lead_model, tools=[researcher.as_tool()])

    result = lead.run_sync("Ask the researcher about Paris")

    assert result.output == "The researcher says Paris is in France."
    assert [t.name for t in child_model.requests[0].tools] == ["lookup"]
    [answer] = next(m for m in result.all_messages() if isinstance(m, ToolResults)).results
    assert answer.text == "Paris is in France."
    assert result.usage().calls == 4  # the child's two model calls count in the parent's usage


def test_message_history_of_the_wrong_kind_is_a_clear_type_error() -> None:
    agent = QuickAgent(name="q", provider=ScriptedProvider(["never"]))
    with pytest.raises(TypeError, match=r"result\.all_messages\(\)"):
        agent.run_sync("go", message_history=["hi"])  # type: ignore[list-item]


def test_one_message_instead_of_a_list_is_a_clear_type_error() -> None:
    from agcore.llm import LLMRequest, UserMessage

    with pytest.raises(TypeError, match=r"LLMRequest\.build\(\[message\]\)"):
        LLMRequest.build(UserMessage(content="hi"))  # type: ignore[arg-type]


def test_quick_agent_is_importable_from_agcore_itself() -> None:
    import agcore

    assert agcore.QuickAgent is QuickAgent
