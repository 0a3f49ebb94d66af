"""Token estimates against real tokenizer counts.

``REFERENCE`` holds (cl100k_base, o200k_base) counts of each sample, measured offline with the
``bpe-openai`` package (a Rust BPE with OpenAI's vocabularies built in; not a dependency of agcore).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agcore.context import (
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD_TOKENS,
    estimate_block_tokens,
    estimate_message_tokens,
    estimate_tokens,
)
from agcore.llm import (
    AssistantMessage,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

SAMPLES: dict[str, str] = json.loads((Path(__file__).parent / "token_samples.json").read_text("utf-8"))

REFERENCE = {
    "english": (195, 196), "code": (205, 205), "json": (111, 111), "chinese": (455, 292),
    "japanese": (198, 141), "korean": (150, 100), "mixed": (116, 101), "russian": (120, 64),
    "numbers": (68, 68), "log": (129, 130),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_estimate_is_within_15_percent_of_cl100k(name: str) -> None:
    cl100k, _ = REFERENCE[name]
    estimate = estimate_tokens(SAMPLES[name])
    assert 0.85 * cl100k <= estimate <= 1.15 * cl100k, (name, estimate, cl100k)


@pytest.mark.parametrize("name", ["chinese", "japanese", "korean", "russian", "mixed"])
def test_non_latin_estimates_never_undershoot_o200k(name: str) -> None:
    # o200k merges CJK and Cyrillic more than cl100k: overestimating it is the safe side.
    _, o200k = REFERENCE[name]
    assert estimate_tokens(SAMPLES[name]) >= o200k


def test_a_thousand_chinese_characters_are_a_sane_number_of_tokens() -> None:
    text = (SAMPLES["chinese"].replace("\n", "") * 3)[:1000]
    # Real counts for this text: cl100k 1082, o200k 700.
    assert 700 <= estimate_tokens(text) <= 1400


def test_cjk_is_counted_per_character_not_per_four_characters() -> None:
    # A chars/4 rule would call this 250 tokens; every tokenizer needs ~700-1100.
    assert estimate_tokens("的" * 1000) >= 700
    assert estimate_tokens("한국어" * 300) >= 600
    assert estimate_tokens("カタカナ" * 250) >= 700


def test_english_follows_the_published_rule_of_thumb() -> None:
    # OpenAI: ~4 characters or ~0.75 words a token for English prose.
    text = SAMPLES["english"]
    estimate = estimate_tokens(text)
    assert 0.8 * len(text) / 4 <= estimate <= 1.2 * len(text) / 4
    assert 0.8 * len(text.split()) / 0.75 <= estimate <= 1.2 * len(text.split()) / 0.75


def test_small_and_empty_texts() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("a") == 1
    assert estimate_tokens("hello") == 1
    assert estimate_tokens("1234567") == 3  # numbers go in groups of three digits
    assert estimate_tokens("    ") == 1  # an indentation run is one token


def test_message_estimates_count_every_kind_of_block() -> None:
    call = ToolUseBlock(id="call_1", name="read_file", input={"path": "README.md", "limit": 40})
    result = ToolResultBlock(tool_use_id="call_1", content=SAMPLES["code"])
    image = ImageBlock(media_type="image/png", data="aGVsbG8=")
    assistant = AssistantMessage(content=[TextBlock(text="Let me look."), call,
                                          ThinkingBlock(thinking="the file is short")])
    user = UserMessage(content=[result, image])
    assert estimate_block_tokens(image) == IMAGE_TOKENS
    assert estimate_block_tokens(result) > estimate_tokens(SAMPLES["code"])
    assert estimate_block_tokens(call) > estimate_tokens('{"path":"README.md","limit":40}')
    total = estimate_message_tokens([assistant, user])
    assert total == (
        2 * MESSAGE_OVERHEAD_TOKENS + sum(estimate_block_tokens(b) for b in assistant.content)
        + estimate_block_tokens(result) + IMAGE_TOKENS
    )
    assert estimate_message_tokens([UserMessage(content="hello there")]) == MESSAGE_OVERHEAD_TOKENS + 2


def test_other_scripts_and_symbols() -> None:
    # Real cl100k counts: 81, 8 and 6. Short accented words are the estimate's weak spot (they
    # count as plain words), which matters little in running text.
    assert 0.8 * 81 <= estimate_tokens("Привет, как дела? " * 10) <= 1.2 * 81
    assert 4 <= estimate_tokens("🙂🙂🙂🙂") <= 8
    assert 3 <= estimate_tokens("café naïve façade") <= 6


def test_tool_results_with_parts_count_text_and_images() -> None:
    result = ToolResultBlock(tool_use_id="x", content=[
        TextBlock(text=SAMPLES["english"]), ImageBlock(url="https://example.com/a.png"),
    ])
    assert estimate_block_tokens(result) >= estimate_tokens(SAMPLES["english"]) + IMAGE_TOKENS


def test_estimating_a_long_history_is_fast() -> None:
    import time

    messages = [UserMessage(content=SAMPLES["mixed"] * 20) for _ in range(200)]  # ~0.5M tokens
    start = time.perf_counter()
    estimate_message_tokens(messages)
    assert time.perf_counter() - start < 1.0
