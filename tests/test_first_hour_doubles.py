"""What a user of the test doubles reads first: ``UserMessage.text``, and the docs/testing.md examples
for ``FunctionProvider`` (which reads it) and ``ScriptedProvider(model_id=...)`` (a priced run), run
as the page prints them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agcore.llm import ImageBlock, TextBlock, ToolResultBlock, UserMessage

DOC = Path(__file__).resolve().parents[1] / "docs" / "testing.md"


def test_a_user_message_has_text_like_every_message() -> None:
    assert UserMessage(content="Weather in Paris?").text == "Weather in Paris?"
    blocks = UserMessage(content=[
        TextBlock(text="What is in "), ImageBlock(media_type="image/png", data="aGk="),
        TextBlock(text="this?"),
        ToolResultBlock(tool_use_id="call_1", content="not text the user wrote"),
    ])
    assert blocks.text == "What is in this?"
    assert UserMessage(content=[ToolResultBlock(tool_use_id="call_1", content="42")]).text == ""


def _page_block(containing: str) -> str:
    page = DOC.read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", page, flags=re.DOTALL) if containing in b]
    return block


def test_the_pages_function_provider_reads_the_users_text() -> None:
    from agcore.agent import QuickAgent
    from agcore.tools import tool

    namespace: dict[str, Any] = {}
    exec(_page_block("FunctionProvider(model)"), namespace)

    @tool
    def get_weather() -> str:
        """Today's weather."""
        return "sunny"

    agent = QuickAgent(name="w", provider=namespace["provider"], tools=[get_weather])
    assert agent.run_sync("Hello").output == "Ask me about the weather."
    assert agent.run_sync("What's the weather?").output == "The tool said sunny"


def test_the_pages_priced_scripted_run_has_a_cost() -> None:
    namespace: dict[str, Any] = {}
    code = "from agcore.testing import ScriptedProvider\n" + _page_block('model_id="claude-haiku-4-5"')
    exec(code, namespace)  # the block asserts the cost itself
    assert namespace["result"].usage().cost_usd > 0
