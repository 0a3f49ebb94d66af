"""Token estimates without a tokenizer: honest for Latin text, code and CJK alike.

No vendor tokenizer ships with agcore (they are large downloads, and every vendor's differs), so the
estimate counts what BPE tokenizers actually merge:

* a run of ASCII letters is one token up to seven letters, then one more per five letters
  (common English words are single tokens; long identifiers split into pieces);
* digits go in groups of three (cl100k/o200k split numbers that way);
* a single space before a word is free (it merges into the word), an indentation run or a newline run
  is one token; punctuation costs one token per ~2 characters of a run (``"):``, ``->``, ``{"``);
* each Han ideograph, kana or Hangul syllable is about one token (o200k merges common pairs, ~0.7 a
  character; cl100k splits rarer characters into byte tokens, ~1.1: one per character is between), other
  non-Latin letters (Cyrillic, Greek, Arabic, Devanagari...) about 2.5 to a token, an emoji or other
  symbol about 1.5.

Measured (``tests/context/test_tokens.py`` keeps the samples and the real counts, taken with a
BPE tokenizer offline) against OpenAI's cl100k_base, the estimate is within ±15% on every sample:
English prose +4%, Python code +13%, JSON +3%, a traceback +10%, Chinese -9%, Japanese +2%, Korean
-7%, Chinese mixed with code +2%, Russian -7%, numbers and dates -12%. o200k_base (GPT-4o and later)
merges CJK and Cyrillic much more (Chinese ~0.7 tokens a character), so for those scripts the
estimate is 40-70% above it: the safe side when deciding to compact. Claude's tokenizer is not
public; Anthropic's own rule of thumb (~3.5 characters a token for English) is within the same band.
Expect ±15%, and leave that headroom in the compaction threshold (the default 0.8 of the window does).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence

from agcore.llm.types import (
    AssistantMessage,
    ContentBlock,
    ImageBlock,
    Message,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

__all__ = [
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD_TOKENS",
    "estimate_block_tokens",
    "estimate_message_tokens",
    "estimate_one_message_tokens",
    "estimate_tokens",
]

#: What one image is counted as. Anthropic bills ~(width x height)/750, at most ~1,600 for an image
#: it does not downscale; OpenAI's high-detail 1024x1024 is 765. The larger keeps estimates safe.
IMAGE_TOKENS = 1600
#: Role markers and message framing, per message.
MESSAGE_OVERHEAD_TOKENS = 4
#: Framing of a tool call or result (ids, names, wrapper tokens) beyond its text.
_TOOL_BLOCK_OVERHEAD = 8

# Every class is a regex run: counting with C-speed findall keeps a million-token history fast.
_CJK = "\u1100-\u11ff\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\U00020000-\U0003ffff"
_LATIN = "A-Za-z\u00c0-\u024f"  # Latin-1 accents (é, ü, ß) merge into words almost like ASCII
_LATIN_RUNS = re.compile(f"[{_LATIN}]+")
_DIGIT_RUNS = re.compile("[0-9]+")
_SPACE_RUNS = re.compile(r"\s+")
_WIDE_CHARS = re.compile(f"[{_CJK}]")
_OTHER_LETTER_RUNS = re.compile(f"[^\\W\\d_{_LATIN}{_CJK}]+")
_PUNCT_RUNS = re.compile(r"[!-/:-@\[-`{-~]+")


def estimate_tokens(text: str) -> int:
    """Roughly how many tokens ``text`` is for current LLM tokenizers, without a tokenizer: within
    about ±15% of OpenAI's cl100k on prose, code, JSON and CJK text, and above o200k for CJK and
    Cyrillic (the safe side when deciding to compact)."""
    if not text:
        return 0
    counted = 0
    total = 0.0
    for run in _LATIN_RUNS.findall(text):
        n = len(run)
        counted += n
        total += 1.0 if n <= 7 else 1.0 + (n - 7) / 5
    for run in _DIGIT_RUNS.findall(text):
        counted += len(run)
        total += math.ceil(len(run) / 3)
    for run in _SPACE_RUNS.findall(text):
        counted += len(run)
        # One space merges into the next word; a newline run or an indentation run is one token.
        total += run != " "
    wide = len(_WIDE_CHARS.findall(text))
    counted += wide
    total += wide
    for run in _OTHER_LETTER_RUNS.findall(text):
        counted += len(run)
        total += max(1.0, len(run) / 2.5)
    for run in _PUNCT_RUNS.findall(text):
        counted += len(run)
        total += math.ceil(len(run) / 2)
    total += 1.5 * (len(text) - counted)  # emoji and other symbols
    return max(1, round(total))


def _json_tokens(value: object) -> int:
    return estimate_tokens(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def estimate_block_tokens(block: ContentBlock) -> int:
    """Tokens of one content block: text by its text, an image at ``IMAGE_TOKENS``, a tool call by
    its name and serialised input, a tool result by its content (plus framing)."""
    if isinstance(block, TextBlock):
        return estimate_tokens(block.text)
    if isinstance(block, ImageBlock):
        return IMAGE_TOKENS
    if isinstance(block, ThinkingBlock):
        # Encrypted reasoning is opaque base64: ~4 characters a token, like any base64.
        return estimate_tokens(block.thinking) + len(block.redacted_data or "") // 4
    if isinstance(block, ToolUseBlock):
        return _TOOL_BLOCK_OVERHEAD + estimate_tokens(block.name) + _json_tokens(block.input)
    if isinstance(block, ToolResultBlock):
        if isinstance(block.content, str):
            body = estimate_tokens(block.content)
        else:
            body = sum(estimate_block_tokens(part) for part in block.content)
        return _TOOL_BLOCK_OVERHEAD + body
    if isinstance(block, ProviderBlock):  # a server tool's call or result, sent back as it came
        return _TOOL_BLOCK_OVERHEAD + _json_tokens(block.data)
    raise TypeError(f"cannot estimate tokens of a {type(block).__name__}; expected a ContentBlock")


def _blocks(message: Message) -> Sequence[ContentBlock]:
    return message.blocks if isinstance(message, UserMessage) else message.content


def estimate_one_message_tokens(message: UserMessage | AssistantMessage) -> int:
    return MESSAGE_OVERHEAD_TOKENS + sum(estimate_block_tokens(b) for b in _blocks(message))


def estimate_message_tokens(messages: Iterable[UserMessage | AssistantMessage]) -> int:
    """Estimated tokens of a history as a model would receive it (without system prompt and tools)."""
    return sum(estimate_one_message_tokens(m) for m in messages)
