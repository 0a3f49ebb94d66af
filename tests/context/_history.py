"""Builders of realistic histories for the context tests."""

from __future__ import annotations

from collections.abc import Sequence

from agcore.llm import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage

AnyMessage = UserMessage | AssistantMessage


def tool_round(n: int, *, calls: int = 1, result_chars: int = 400, text: str = "") -> list[AnyMessage]:
    """An assistant reply calling ``calls`` tools, and the user message answering them."""
    uses = [ToolUseBlock(id=f"call_{n}_{i}", name="read_file", input={"path": f"src/file_{n}_{i}.py"})
            for i in range(calls)]
    content: list[TextBlock | ToolUseBlock] = [TextBlock(text=text or f"Reading batch {n}.")]
    body = (f"line of file {n}: def handler_{n}(request): return process(request)\n" * 200)
    results = [ToolResultBlock(tool_use_id=u.id, content=body[:result_chars]) for u in uses]
    return [AssistantMessage(content=[*content, *uses]), UserMessage(content=list(results))]


def long_history(
    rounds: int, *, result_chars: int = 400, task: str = "Refactor the handlers."
) -> list[AnyMessage]:
    history: list[AnyMessage] = [UserMessage(content=task)]
    for n in range(rounds):
        history.extend(tool_round(n, result_chars=result_chars))
    history.append(AssistantMessage(content=[TextBlock(text="Done with the reading.")]))
    history.append(UserMessage(content="Now summarise what you found."))
    return history


def assert_valid(messages: Sequence[AnyMessage]) -> None:
    """Every tool call is answered in the very next message, every result answers the call just
    before it, and no two messages in a row share a role."""
    for i, message in enumerate(messages):
        if i and type(messages[i - 1]) is type(message):
            raise AssertionError(f"messages {i - 1} and {i} are both {message.role}")
        if isinstance(message, AssistantMessage) and message.tool_calls:
            assert i + 1 < len(messages), f"the calls of message {i} have no answer"
            answer = messages[i + 1]
            assert isinstance(answer, UserMessage)
            answered = {r.tool_use_id for r in answer.tool_results}
            assert {c.id for c in message.tool_calls} <= answered, f"message {i}'s calls are unanswered"
        if isinstance(message, UserMessage) and message.tool_results:
            before = messages[i - 1] if i else None
            called = {c.id for c in before.tool_calls} if isinstance(before, AssistantMessage) else set()
            assert {r.tool_use_id for r in message.tool_results} <= called, f"message {i} answers nothing"
