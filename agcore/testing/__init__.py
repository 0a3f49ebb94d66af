"""Test doubles so downstream users test their agents without a network.

``ScriptedProvider`` answers each call with the next reply of a script (text, a tool call, an
``LLMError`` to raise, or a function of the request) and records every request; ``FunctionProvider``
answers with a Python function of the messages and tools. Both are real providers: retries,
``ErrorEvent``s and streamed event sequences behave exactly as with a vendor.

```python
from agcore.testing import ScriptedProvider, tool_call_reply

model = ScriptedProvider([tool_call_reply("read_file", {"path": "README.md"}), "It is a kernel."])
model = load_script("replies.yaml")   # the same from a JSON/YAML file (the CLI's --model scripted:PATH)
```
"""

from __future__ import annotations

from agcore.testing._clock import FixedClock
from agcore.testing._providers import (
    FunctionProvider,
    ReplyFunction,
    Responder,
    ScriptedProvider,
    ScriptedReply,
    ScriptedResponse,
    ScriptExhaustedError,
    text_reply,
    tool_call_reply,
    tool_calls_reply,
)
from agcore.testing._script_file import (
    ScriptExpectationError,
    ScriptFileError,
    load_script,
    script_responses,
)

__all__ = [
    "FixedClock",
    "FunctionProvider",
    "ReplyFunction",
    "Responder",
    "ScriptExhaustedError",
    "ScriptExpectationError",
    "ScriptFileError",
    "ScriptedProvider",
    "ScriptedReply",
    "ScriptedResponse",
    "load_script",
    "script_responses",
    "text_reply",
    "tool_call_reply",
    "tool_calls_reply",
]
