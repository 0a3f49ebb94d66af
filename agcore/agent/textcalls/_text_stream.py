"""Streaming text mode without showing the user raw call JSON as if it were the answer.

While a text-mode reply streams, ``CallTextFilter`` passes prose through as it comes and holds back
what may be the start of a call written as text (``{``, ``[{``, a code fence, ``<tool_call>``) until
it is known: a call (or a fragment that tried to be one) is never shown; anything else (a code block,
JSON that is data) is shown once it is closed. After a call, a line that starts the way a made-up
result starts (``Tool result:``, ``<tool_response``) ends what is shown, as does a result tag that
opens a line before any call, and (in text mode, ``lone_results``) a line opening with a result
label (``Tool result:``, ``Observation:``; not a bare ``Result:``): the loop cuts such text off too.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from agcore.agent._brackets import BracketScan
from agcore.agent.textcalls._text_calls import parse_text_calls

__all__ = ["CallTextFilter"]

_SPECIAL = re.compile(r"[{\[`<\n]")
_OPENERS = ("<tool_call>", "<think>")
_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"
_RESULT_TAGS = ("<tool_response", "<tool_result", "<tool_output")
# Line starts of a made-up result (as ``_text_calls._INVENTED_LINE`` reads them), lower case.
_RESULT_LINES = (
    "tool result", "tool_result", "toolresult", "tool response", "tool_response", "tool output",
    "tool_output", "observation", "result", "output",
)
# With no call before them, only result labels (as ``_text_calls._INVENTED_ALONE_LINE``): a real
# answer may open with "Result:" or "Output:".
_LONE_RESULT_LINES = (
    "tool result", "tool_result", "toolresult", "tool response", "tool_response", "tool output",
    "tool_output", "function result", "function_result", "function output", "function_output",
    "observation", "工具结果", "工具返回",
)
_LINE_PREFIX = re.compile(r"[ \t>*#]*")


class CallTextFilter:
    """Feed it a text-mode reply's deltas; it returns what can be shown now (see the module)."""

    def __init__(self, offered: Collection[str] | None, *, lone_results: bool = False) -> None:
        self._offered = offered
        self._lone_results = lone_results  # text mode: a result label with no call before it is cut
        self._text = ""
        self._pos = 0  # everything before it is decided (shown or hidden)
        self._hold: BracketScan | None = None  # the span being held, from ``_pos``
        self._after_call = False
        self._line_start = True
        self._discard = False
        self._thinking = False  # inside <think>: reasoning streams as it is (calls there are not run)
        self._shown = ""

    def feed(self, delta: str) -> str:
        """What of the reply so far can be shown, beyond what was shown already."""
        self._text += delta
        return self._show(self._advance(final=False))

    def flush(self) -> str:
        """At the end of the reply: the rest, minus any call or made-up result."""
        return self._show(self._advance(final=True))

    def unseen(self, answer: str) -> str:
        """What of ``answer`` (the reply, when nothing in it was a call after all) was held back: the
        end of it that looked like a call; empty when it was all shown or cannot be told apart."""
        if len(answer) > len(self._shown) and answer.startswith(self._shown):
            return answer[len(self._shown):]
        return ""

    def _show(self, text: str) -> str:
        self._shown += text
        return text

    def _hidden(self, fragment: str) -> bool:
        parsed = parse_text_calls(fragment, self._offered)
        if parsed.calls:
            self._after_call = True
        return bool(parsed.calls or parsed.problems)

    def _decide(self, start: int, end: int) -> str:
        fragment = self._text[start:end]
        self._pos = end
        self._hold = None
        self._line_start = fragment.endswith("\n")
        return "" if self._hidden(fragment) else fragment

    def _advance(self, *, final: bool) -> str:
        text = self._text
        shown: list[str] = []
        while self._pos < len(text) and not self._discard:
            pos = self._pos
            if self._thinking:
                close = text.find(_THINK_CLOSE, pos)
                if close != -1:
                    upto = close + len(_THINK_CLOSE)
                    self._thinking = False
                else:  # all but what may be the start of the closing tag
                    upto = len(text) if final else max(pos, len(text) - len(_THINK_CLOSE) + 1)
                shown.append(text[pos:upto])
                self._pos = upto
                if self._thinking:
                    break
                continue
            if self._line_start and (self._after_call or self._lone_results):
                words = _RESULT_LINES if self._after_call else _LONE_RESULT_LINES
                verdict = self._result_line(pos, final, words)
                if verdict is None:
                    break  # wait for more of the line
                if verdict:
                    self._discard = True
                    break
            if self._hold is not None:
                end = self._hold.end(text)
                if end is None:
                    if final:
                        shown.append(self._decide(pos, len(text)))
                    break
                shown.append(self._decide(pos, end))
                continue
            match = _SPECIAL.search(text, pos)
            if match is None:
                shown.append(text[pos:])
                self._pos = len(text)
                self._line_start = False
                break
            at = match.start()
            if at > pos:
                shown.append(text[pos:at])
                self._pos = pos = at
                self._line_start = False
            ch = text[at]
            if ch == "\n":
                shown.append(ch)
                self._pos = at + 1
                self._line_start = True
                continue
            step = self._special(at, final)
            if step is None:
                break  # undecided: wait for more text
            shown.append(step)
        return "".join(shown)

    def _special(self, at: int, final: bool) -> str | None:
        """Handle the character at ``at`` (a possible start of a call); None: not known yet."""
        text = self._text
        rest = text[at:]
        ch = text[at]
        if ch == "{":
            self._hold = BracketScan(at)
            return ""
        if ch == "[":
            tail = rest[1:].lstrip()
            if not tail and not final:
                return None
            if tail.startswith("{"):
                self._hold = BracketScan(at)
                return ""
        elif ch == "`":
            if rest.startswith("```"):
                close = text.find("```", at + 3)
                if close == -1:
                    return self._decide(at, len(text)) if final else None
                return self._decide(at, close + 3)
            if "```".startswith(rest) and not final:
                return None
        elif ch == "<":
            if rest.startswith(_THINK_OPEN):
                self._thinking = True
                self._pos = at + len(_THINK_OPEN)
                return _THINK_OPEN
            if rest.startswith("<tool_call>"):
                close = text.find("</tool_call>", at)
                if close == -1:
                    return self._decide(at, len(text)) if final else None
                return self._decide(at, close + len("</tool_call>"))
            lowered = rest.lower()
            # A result tag after a call, or opening a line: a result the model writes itself.
            result_tag = self._after_call or self._line_start
            if result_tag and lowered.startswith(_RESULT_TAGS):
                self._discard = True
                return ""
            prefixes = _OPENERS + (_RESULT_TAGS if result_tag else ())
            if not final and any(p.startswith(lowered) for p in prefixes):
                return None
        self._pos = at + 1
        self._line_start = False
        return ch

    def _result_line(self, pos: int, final: bool, words: tuple[str, ...]) -> bool | None:
        """Whether the line at ``pos`` starts a made-up result (None: too little of it yet)."""
        newline = self._text.find("\n", pos)
        line = self._text[pos:] if newline == -1 else self._text[pos:newline]
        body = line[_LINE_PREFIX.match(line).end() :].lower()  # type: ignore[union-attr]
        for word in words:
            if body.startswith(word):
                after = body[len(word) :].lstrip()
                if after[:1] in (":", "(", "\uff1a"):  # also the full-width colon
                    return True
                if not after and newline == -1 and not final:
                    return None
        if newline == -1 and not final and any(w.startswith(body) for w in words):
            return None
        return False
