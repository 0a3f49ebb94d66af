"""``KeywordIntentClassifier``: the cheap default, by keywords (English and Chinese), no model call.

Each label has patterns; the label whose patterns match most wins, ties going to the label listed
first (a coding task before an analysis before a question before chat: the costlier route is the
safe one when in doubt). A short text that matches nothing is chat ("ok", "好的"); a longer one
is ``UNCERTAIN``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from agcore.agent.intent._intent import (
    CAPABILITY_QUERY,
    CHAT,
    CODING_TASK,
    REPO_ANALYSIS,
    UNCERTAIN,
    Intent,
)

if TYPE_CHECKING:
    from agcore.agent.session_like import SessionLike

__all__ = ["DEFAULT_KEYWORDS", "KeywordIntentClassifier"]

#: Regular expressions per label, matched case-insensitively; the order is the tie-break order.
DEFAULT_KEYWORDS: dict[str, tuple[str, ...]] = {
    CODING_TASK: (
        r"\b(fix|implement|refactor|rewrite|rename|patch|debug|migrate|optimi[sz]e|bump|convert|port|"
        r"upgrade|downgrade)\b",
        r"\b(add|write|create|change|modify|update|remove|delete|replace|move|extract|make)\b"
        r"(?!\s+(me\s+)?(sense|sure)\b)",
        r"\b(bug|failing|fails|broken|crash(es)?|traceback|exception|error)\b",
        r"\b(unit )?tests? (for|pass)|\bmake (the )?tests? pass\b",
        r"修复|实现|重构|添加|增加|新增|编写|写一个|写个|修改|改成|改为|换成|替换|删除|移除|创建|优化|调试|"
        r"报错|修一下|改一下|加上|加个|升级",
    ),
    REPO_ANALYSIS: (
        r"\b(explain|summari[sz]e|overview|analy[sz]e|review|understand|walk me through|describe)\b",
        r"\b(how|where|why) (does|do|is|are)\b(?! (you|i use you)\b)|\bwhat does\b|\bwhere (is|are)\b",
        r"\b(which|what) (\w+ )?(files?|modules?|functions?|classes|tests?|packages?)\b|\bis there (any|a)\b",
        r"\b(find|show|list)\b",
        r"\b(architecture|structure|entry ?point|purpose)\b",
        r"解释|分析|概述|总结|架构|结构|在哪|哪里|是怎么|如何工作|做什么的|代码库|仓库|看一下|讲讲",
    ),
    CAPABILITY_QUERY: (
        r"\bwhat (else )?can you do\b|\bwhat are you (able|capable)\b|\bare you able to\b",
        r"\b(your|which|what) tools\b|\bcapabilit(y|ies)\b|\bwho are you\b|\bwhat are you\b",
        r"\bhow (do|can) i use you\b|\bwhat do you support\b|\bcan you (help|do|handle)\b",
        r"\b(can|could) you (run|read|access|browse|search the web|see|open|execute|edit)\b",
        r"\bdo you (have|support|know|speak)\b|\b(which|what) \w+ (do|can) you\b",
        r"你能做什么|你会什么|你能干什么|你是谁|有哪些工具|什么工具|你的能力|能帮我做什么|你(会|能|可以).{0,8}吗",
    ),
    CHAT: (
        r"^\W*(hi|hello|hey|yo|thanks|thank you|thx|good (morning|afternoon|evening|night)|bye|"
        r"goodbye|ok(ay)?|cool|great|nice|lol)\b",
        r"\bhow are you\b|\bnice to meet you\b|\bhave a (nice|good) day\b|\b(thanks|thank you|thx|cheers)\b",
        r"^\W*(perfect|awesome|sounds good|got it|see you|understood|great)\b",
        r"^\W*(你好|您好|嗨|谢谢|多谢|早上好|晚上好|晚安|再见|哈哈|好的)",
    ),
}

_SHORT_WORDS = 3  # a text this short that matches nothing is small talk
_SHORT_CJK = 4  # in characters, for text written without spaces
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


class KeywordIntentClassifier:
    """Classifies by ``keywords`` (label -> patterns; ``DEFAULT_KEYWORDS``): the label matching most
    patterns wins, ties to the label listed first; confidence grows with the lead over the runner-up.
    Pass your own ``keywords`` to add labels (``{**DEFAULT_KEYWORDS, "deploy": (r"\\bdeploy\\b",)}``).
    """

    name = "keywords"

    def __init__(self, keywords: Mapping[str, Sequence[str]] | None = None) -> None:
        chosen = DEFAULT_KEYWORDS if keywords is None else keywords
        if not chosen:
            raise ValueError("keywords must name at least one label with its patterns")
        try:
            self._patterns = {
                label: tuple(re.compile(p, re.IGNORECASE) for p in patterns)
                for label, patterns in chosen.items()
            }
        except re.error as exc:
            raise ValueError(f"a keyword pattern is not a valid regular expression: {exc}") from None

    @property
    def labels(self) -> tuple[str, ...]:
        """The labels this classifier chooses from (besides ``UNCERTAIN``)."""
        return tuple(self._patterns)

    def classify_text(self, text: str) -> Intent:
        """The intent of ``text``, at once (``classify`` is the protocol's awaitable form)."""
        scores = {label: sum(1 for p in patterns if p.search(text))
                  for label, patterns in self._patterns.items()}
        ranked = sorted(scores.items(), key=lambda item: -item[1])  # stable: ties keep listed order
        best, score = ranked[0]
        if score == 0:
            if _short(text) and CHAT in self._patterns:
                return Intent(label=CHAT, confidence=0.4, reason="short, no keywords",
                              classifier=self.name)
            return Intent(label=UNCERTAIN, confidence=0.0, reason="no keywords matched",
                          classifier=self.name)
        runner_up = ranked[1][1] if len(ranked) > 1 else 0
        confidence = min(0.95, 0.5 + 0.15 * (score - runner_up) + 0.05 * score)
        matched = ", ".join(f"{label} {n}" for label, n in ranked if n)
        return Intent(label=best, confidence=round(confidence, 2), reason=f"keywords: {matched}",
                      classifier=self.name)

    async def classify(self, text: str, session: SessionLike | None = None) -> Intent:
        """The intent of ``text`` (``session`` is not needed)."""
        return self.classify_text(text)


def _short(text: str) -> bool:
    """A few words, or (in Chinese, Japanese, Korean) a few characters."""
    return len(text.split()) <= _SHORT_WORDS and len(_CJK.findall(text)) <= _SHORT_CJK
