"""``CodeHashingEmbedder``: the code index's offline default, ``HashingEmbedder`` taught to read code.

Plain feature hashing sees ``charge_customer`` and ``CostTracker`` as one word each, so a question
about "customer charges" or "cost" shares nothing with them but character trigrams. Here names are
split into their words first (snake_case and camelCase), and the words every piece of code is full
of (``def``, ``self``, ``return``, ``the``) are dropped, so what is hashed is what the code is about.
On bench/code_search.py's questions this lifts vector-only recall@5 from 59% to 78% (1,024
dimensions; 512 lose some to collisions). CJK characters are kept, each a word, as
``HashingEmbedder`` treats them.
"""

from __future__ import annotations

import re

from agcore.memory import HashingEmbedder

__all__ = ["CodeHashingEmbedder"]

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_WORD_IN_NAME = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\x00-\x7f]")
_NOISE_TEXT = """
a an and are as at be by for from has have if in into is it its of on or that the this to was were
will with not no do does can may
def class self cls return import async await none true false elif else try except finally raise
pass lambda yield while str int float bool bytes list dict set tuple any args kwargs
function const let var new this export default public private static void interface type fn pub
impl struct mut func package go nil err
"""
_NOISE = frozenset(_NOISE_TEXT.split())


class CodeHashingEmbedder(HashingEmbedder):
    """Feature hashing of a text's code words: names split into words, keywords and function words
    left out. Deterministic, needs no model; a baseline for vocabulary, not meaning."""

    def __init__(self, dimensions: int = 1024) -> None:
        super().__init__(dimensions)
        self.name = f"code-hashing-{dimensions}"

    def embed_one(self, text: str) -> list[float]:
        """The unit-length vector of ``text``'s code words (see the class)."""
        words = [
            word.lower()
            for token in _TOKEN.findall(text)
            for word in _WORD_IN_NAME.findall(token)
            if len(word) > 1 or not word.isascii()
        ]
        return super().embed_one(" ".join(w for w in words if w not in _NOISE))
