from __future__ import annotations

import pytest

from agcore.code import CodeHashingEmbedder
from agcore.memory import HashingEmbedder


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_names_are_read_as_their_words() -> None:
    code, plain = CodeHashingEmbedder(), HashingEmbedder(1024)
    source = "def charge_customer(self, invoice: Invoice) -> bool:\n    return CardGateway.charge(invoice)"
    question = "charge the customer's card through the gateway"
    assert cosine(code.embed_one(source), code.embed_one(question)) > 0.4
    assert cosine(code.embed_one(source), code.embed_one(question)) > 2 * cosine(
        plain.embed_one(source), plain.embed_one(question))


def test_keywords_and_function_words_carry_nothing() -> None:
    embedder = CodeHashingEmbedder()
    assert not any(embedder.embed_one("def self return the of async await None"))
    same = embedder.embed_one("def parse_amount(self) -> None: return None")
    assert cosine(same, embedder.embed_one("parse amount")) == pytest.approx(1.0)


def test_cjk_text_still_counts() -> None:
    embedder = CodeHashingEmbedder(256)
    assert cosine(embedder.embed_one("# 计算发票总额"), embedder.embed_one("发票总额")) > 0.5
    assert embedder.name == "code-hashing-256"
