"""Embedders: the ``Embedder`` protocol and ``HashingEmbedder``, a deterministic offline baseline.

Vectors are kept as float32 (``array('f')``), L2-normalised, so cosine similarity is a dot product.
Pure Python (no numpy dependency): fine for thousands of items per query, not for millions.
"""

from __future__ import annotations

import itertools
import math
import re
import zlib
from array import array
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from agcore.memory._in_memory import _CJK

__all__ = ["Embedder", "HashingEmbedder", "cosine", "pack_vector", "unpack_vector"]

_WORD = re.compile(f"[{_CJK}]|(?:(?![{_CJK}])\\w)+")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors (one per text, all of one dimension). A ``name`` attribute, when
    present, keys the stored vectors, so that two embedders never mix their vectors."""

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...


def normalise(vector: Sequence[float]) -> array[float]:
    out = array("f", vector)
    norm = math.sqrt(sum(x * x for x in out))
    if norm > 0:
        for i, x in enumerate(out):
            out[i] = x / norm
    return out


def pack_vector(vector: Sequence[float]) -> bytes:
    """An L2-normalised float32 blob of ``vector``."""
    return normalise(vector).tobytes()


def unpack_vector(blob: bytes) -> array[float]:
    out = array("f")
    out.frombytes(blob)
    return out


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0.0 when either vector is zero or the dimensions differ."""
    if len(a) != len(b):
        return 0.0
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(math.fsum(x * x for x in a))
    nb = math.sqrt(math.fsum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


class HashingEmbedder:
    """Feature hashing of words, word bigrams and character trigrams into ``dimensions`` signed buckets.

    A baseline, not a semantic model: texts score as similar when they share words or pieces of
    words (so it tolerates inflections and typos a little), never when they only mean the same thing.
    Deterministic across processes and machines (CRC32, not Python's salted ``hash``), needs no
    download, and costs tens of microseconds per text: for tests, offline use and as a fallback.
    """

    def __init__(self, dimensions: int = 256) -> None:
        if dimensions < 8:
            raise ValueError(f"HashingEmbedder needs at least 8 dimensions, got {dimensions}.")
        self.dimensions = dimensions
        self.name = f"hashing-{dimensions}"

    def embed_one(self, text: str) -> list[float]:
        """The unit-length vector of ``text``: its words, word pairs and character trigrams hashed into
        ``dimensions`` buckets."""
        vector = [0.0] * self.dimensions
        words = [w.lower() for w in _WORD.findall(text)]
        features: list[tuple[str, float]] = [(w, 1.0) for w in words]
        features += [(f"{a} {b}", 0.5) for a, b in itertools.pairwise(words)]
        for word in words:
            padded = f"<{word}>"
            if len(padded) > 4:
                features += [(padded[i : i + 3], 0.25) for i in range(len(padded) - 2)]
        for feature, weight in features:
            h = zlib.crc32(feature.encode())
            vector[h % self.dimensions] += weight if h & 0x80000000 else -weight
        norm = math.sqrt(sum(x * x for x in vector))
        return [x / norm for x in vector] if norm else vector

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order (``embed_one`` each; no I/O)."""
        return [self.embed_one(t) for t in texts]
