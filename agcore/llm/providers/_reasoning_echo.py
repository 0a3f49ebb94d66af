"""Which Chat Completions vendors want a reply's reasoning sent back, and how: the one table.

Reasoning models behind OpenAI-compatible APIs return their reasoning beside the answer
(``reasoning_content``), and several require it back on the assistant messages of the history they
wrote: Moonshot's Kimi thinking models answer 400 ("reasoning_content is missing in assistant tool
call message") without it, DeepSeek and Qwen want it back within a tool-calling turn, and chat
templates served by vLLM or llama.cpp (Qwen3, GLM) render it there. Others reject the field
(OpenAI itself, Groq, Mistral). Reasoning is only ever sent back to the vendor that wrote it: a
``ThinkingBlock`` records its ``provider``, and an assistant message its ``provider`` and ``model``.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["COMPATIBLE", "NEVER", "ReasoningEcho", "echo_rule", "vendor_for"]


@dataclass(frozen=True, slots=True)
class ReasoningEcho:
    """How one vendor wants the reasoning of its own replies sent back.

    ``field`` is the assistant-message field it goes in (None: never sent). ``tool_calls_only``: only
    on messages that made tool calls. ``current_turn_only``: only on the replies after the latest
    user input (tool results do not start a turn). ``same_model``: only to the model that wrote it,
    for servers whose provider name says nothing about which server it was."""

    field: str | None
    tool_calls_only: bool = True
    current_turn_only: bool = True
    same_model: bool = False


NEVER = ReasoningEcho(field=None)

#: vendor name -> (API host names, rule). A host matches itself and its subdomains.
_VENDORS: dict[str, tuple[tuple[str, ...], ReasoningEcho]] = {
    # The official API has no input for reasoning (its reasoning is not even returned).
    "openai": (("api.openai.com",), NEVER),
    # Kimi thinking models reject a history whose assistant tool-call messages lack their reasoning.
    "moonshot": (("api.moonshot.ai", "api.moonshot.cn"),
                 ReasoningEcho("reasoning_content", tool_calls_only=False, current_turn_only=False)),
    # Thinking mode with tools: reasoning goes back within the turn; earlier turns' is ignored.
    "deepseek": (("api.deepseek.com",), ReasoningEcho("reasoning_content")),
    # Qwen on Alibaba Cloud Model Studio (DashScope's compatible mode), same as DeepSeek.
    "qwen": (("dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com", "dashscope-us.aliyuncs.com"),
             ReasoningEcho("reasoning_content")),
    # Strict schemas: an unknown message field is a 400 there.
    "groq": (("api.groq.com",), NEVER),
    "mistral": (("api.mistral.ai",), NEVER),
}

#: Self-hosted servers (vLLM, llama.cpp, SGLang, LM Studio on loopback or a private network):
#: their chat templates (Qwen3, GLM) render ``reasoning_content`` of the current tool-calling turn.
#: The provider name ("openai-compatible") does not tell two such servers apart: the model must match.
_SELF_HOSTED = ReasoningEcho("reasoning_content", same_model=True)

#: The name a self-hosted or unknown compatible server goes by.
COMPATIBLE = "openai-compatible"


def vendor_for(base_url: str | None) -> str | None:
    """The vendor whose API ``base_url`` is (``"deepseek"``, ``"moonshot"``...), or None for a
    server the table does not know. No base URL is OpenAI itself."""
    if base_url is None:
        return "openai"
    host = (urlsplit(base_url).hostname or "").lower()
    for vendor, (hosts, _) in _VENDORS.items():
        if any(host == known or host.endswith("." + known) for known in hosts):
            return vendor
    return None


def _self_hosted(base_url: str | None) -> bool:
    host = (urlsplit(base_url or "").hostname or "").lower()
    if not host:
        return False
    if host == "localhost" or "." not in host or host.endswith((".local", ".lan", ".internal", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def echo_rule(provider_name: str, base_url: str | None) -> ReasoningEcho:
    """The rule for a provider named ``provider_name`` at ``base_url``: by the name when it is a vendor
    the table knows (``provider_name="moonshot"`` for a proxy in front of Kimi), else by the host;
    a self-hosted server gets the template rule; any other server never gets reasoning back (an
    unknown field is a 400 on strict APIs)."""
    if provider_name in _VENDORS:
        return _VENDORS[provider_name][1]
    vendor = vendor_for(base_url)
    if vendor is not None:
        return _VENDORS[vendor][1]
    return _SELF_HOSTED if _self_hosted(base_url) else NEVER
