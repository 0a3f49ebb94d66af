"""Finding the tool calls a model wrote in its text (text-mode tool calling, see ``_text_tools``).

Small models write calls every way they were trained to: a bare JSON object, one or several in a
fenced block, several fenced blocks, a JSON array of calls, objects between sentences, Qwen/Hermes
``<tool_call>…</tool_call>`` tags (JSON inside, or Qwen3-Coder's ``<function=…><parameter=…>`` form),
OpenAI-shaped ``{"type": "function", "function": {...}}`` objects. ``parse_text_calls`` finds every
call, in the order written.

Two rules make it safe. It never merges: the text is first split into balanced ``{...}`` fragments
(braces inside JSON strings ignored), and json-repair only ever sees one fragment, so two calls stay
two calls. It never invents: a fragment counts as a call only when it names an offered tool; one that
looks like a call but cannot be read (a tool that does not exist, JSON beyond repair) stays text and
is reported in ``problems``, which the loop tells the model; JSON that is data (an answer's example,
a dict in code) is left alone. A model that goes on after its call and writes the result itself has
that invented result cut off (``invented``): only the tools' real results count.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from agcore.agent._brackets import span_end
from agcore.llm import parse_tool_arguments, read_lenient_object

__all__ = ["RESULT_LABEL", "TextCall", "TextCalls", "find_invented_result", "parse_text_calls"]

#: How tool results start in text mode (``<tool_response name=... status=...>``), and the stop
#: sequence on it: the tag Qwen/Hermes-style chat templates use, so a model that starts to write a
#: result itself is stopped by the server.
RESULT_LABEL = "<tool_response"

_NAME_KEYS = ("tool", "tool_name", "function", "name", "action", "tool_call")
# Keys that make a fragment a call attempt even when the name is no tool: "name" and "action" are
# common in data, so they only count next to an arguments key.
_STRONG_NAME_KEYS = frozenset({"tool", "tool_name", "function", "tool_call"})
_ARG_KEYS = ("arguments", "args", "input", "parameters", "params", "action_input", "tool_input")
_WRAPPER_KEYS = ("tool_calls", "calls", "tool_uses")

_TAG = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)
_FENCE = re.compile(r"```[ \t]*([\w+.-]*)[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_QWEN_FUNCTION = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|\Z)", re.DOTALL)
_QWEN_PARAMETER = re.compile(r"<parameter=([^>\s]+)>\n?(.*?)\n?(?:</parameter>|\Z)", re.DOTALL)
# A name copied from an example rather than the tool list: TOOL_NAME, tool_name, <tool name>, ...
_PLACEHOLDER_NAME = re.compile(r"<[^<>]*>|(?i:tool[ _-]?name|function[ _-]?name|name_of_the_tool)")
_ATTEMPT_TEXT = re.compile(r"[\"'](?:tool|tool_name|function|arguments|tool_call)[\"']\s*:")
# Special tokens some chat templates put around calls; left in the prose they are noise.
_CALL_TOKENS = re.compile(r"<\|python_tag\|>|\[TOOL_CALLS\]|<\|eom_id\|>|<\|eot_id\|>|<\|im_end\|>")
_EMPTY_FENCE = re.compile(r"```[\w+.-]*\s*```")
_LONE_FENCE = re.compile(r"\s*```[\w+.-]*\s*")
_PUNCTUATION_ONLY = re.compile(r"[\s\[\],]*")
# What a model writes when it makes up a result: the result label, or a line that starts like one.
_INVENTED_TAG = re.compile(r"<tool_(?:response|result|output)\b", re.IGNORECASE)
_INVENTED_TAG_LINE = re.compile(r"^[ \t]*<tool_(?:response|result|output)\b", re.IGNORECASE | re.MULTILINE)
_INVENTED_LINE = re.compile(
    r"^[ \t>*#]*(?:tool[ _]?(?:result|response|output)|observation|result|output)\s*(?:\(|:)",
    re.IGNORECASE | re.MULTILINE,
)
# With no call before it, only the labels a result is written under (the ones the plans' verifier
# knows), never a bare "Result:"/"Output:" line, which a real answer may open with.
_INVENTED_ALONE_LINE = re.compile(
    r"^[ \t>*#]*(?:tool[ _]?(?:result|response|output)|function[ _](?:result|output)|observation"
    r"|工具结果|工具返回)\s*(?:\(|:|\uff1a)",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class TextCall:
    """One call found in the text: the tool, its arguments (``parse_error`` when they could not be
    read), and where it was written (``start``/``end``, offsets in the text)."""

    name: str
    arguments: dict[str, Any]
    parse_error: str | None
    start: int
    end: int
    #: The JSON was broken and json-repair read it (auto mode does not switch on such a call alone).
    repaired: bool = False


@dataclass(slots=True)
class TextCalls:
    """What ``parse_text_calls`` read: ``parts`` is the reply in order, prose (``str``) and calls;
    ``problems`` says, for the model, what looked like a call but could not be read; ``invented`` is
    the result the model wrote itself (cut off, never used); ``tagged_problems``: a problem was in a
    ``<tool_call>`` tag (a call attempt beyond doubt); ``answer`` is the prose with the unreadable
    fragments and any ``<think>`` left out (for a reply with no calls; empty: nothing in it could be
    an answer)."""

    parts: list[str | TextCall] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    invented: str | None = None
    tagged_problems: bool = False
    answer: str = ""

    @property
    def calls(self) -> list[TextCall]:
        """The calls, in the order written."""
        return [p for p in self.parts if isinstance(p, TextCall)]

    @property
    def prose(self) -> str:
        """The text around the calls, joined."""
        return "\n\n".join(p for p in self.parts if isinstance(p, str))


@dataclass(slots=True)
class _Read:
    """How one fragment reads: calls (usually one), or a problem, or neither (data)."""

    calls: list[tuple[str, dict[str, Any], str | None]] = field(default_factory=list)
    problem: str | None = None
    #: The fragment was never closed (the reply ended inside it).
    unclosed: bool = False
    #: The fragment was broken JSON that json-repair read.
    repaired: bool = False
    #: The fragment was inside a ``<tool_call>`` tag.
    tagged: bool = False


def _shown(fragment: str) -> str:
    flat = " ".join(fragment.split())
    return flat if len(flat) <= 120 else flat[:117] + "..."


def _name_of(value: dict[str, Any]) -> tuple[str | None, str | None]:
    """The name a fragment gives and the key it is under."""
    for key in _NAME_KEYS:
        candidate = value.get(key)
        if isinstance(candidate, str) and candidate.strip():
            return candidate.strip(), key
    return None, None


class _Reader:
    """Reads fragments against the offered tools (``offered``; None: any name is a tool)."""

    def __init__(self, offered: Collection[str] | None) -> None:
        self.offered = offered

    def _is_tool(self, name: str) -> bool:
        return self.offered is None or name in self.offered

    def _no_such_tool(self, name: str, fragment: str) -> str:
        tools = ", ".join(sorted(self.offered or ())) or "none"
        if _PLACEHOLDER_NAME.fullmatch(name):  # the protocol's example, copied as it stands
            return (
                f"{_shown(fragment)}: '{name}' is the example's placeholder, not a tool; write the name "
                f"of one of the tools instead ({tools})."
            )
        return f"{_shown(fragment)}: there is no tool named '{name}' (the tools are: {tools})."

    def read_value(self, value: Any, fragment: str, *, strong: bool, unclosed: bool = False) -> _Read:
        """A decoded fragment as calls; ``strong``: it is a call attempt whatever it holds."""
        if isinstance(value, list):
            read = _Read()
            for item in value:
                part = self.read_value(item, fragment, strong=strong, unclosed=unclosed)
                read.calls += part.calls
                read.problem = read.problem or part.problem
            return read
        if not isinstance(value, dict):
            return _Read(problem=f"{_shown(fragment)}: this is not a JSON object." if strong else None)
        for key in _WRAPPER_KEYS:
            if isinstance(value.get(key), list):
                return self.read_value(value[key], fragment, strong=True, unclosed=unclosed)
        nested = value.get("function")
        if isinstance(nested, dict):  # OpenAI's {"type": "function", "function": {...}}
            return self.read_value(nested, fragment, strong=True, unclosed=unclosed)
        name, name_key = _name_of(value)
        has_args = any(k in value for k in _ARG_KEYS)
        if name is None:
            return _Read(problem=f"{_shown(fragment)}: it names no tool." if strong or has_args else None)
        if not self._is_tool(name):
            attempt = strong or has_args or name_key in _STRONG_NAME_KEYS
            return _Read(problem=self._no_such_tool(name, fragment) if attempt else None)
        raw: Any = next((value[k] for k in _ARG_KEYS if k in value), None)
        if raw is None and unclosed:
            return _Read(problem=f"{_shown(fragment)}: the call was cut off before its arguments.")
        if raw is None:  # {"tool": "x", "path": "a"}: the arguments beside the name
            raw = {k: v for k, v in value.items() if k != name_key and k not in ("type", "id")}
        arguments, error = parse_tool_arguments(raw)
        return _Read(calls=[(name, arguments, error)])

    def read_fragment(self, fragment: str, *, strong: bool, unclosed: bool = False) -> _Read:
        """A fragment of JSON text: parsed, else (a call attempt only) repaired, on its own."""
        try:
            value = json.loads(fragment)
        except ValueError:
            if not (strong or _ATTEMPT_TEXT.search(fragment)):
                return _Read()  # braces in prose or code, not a call
            lenient = read_lenient_object(fragment)  # strings written the Python way, as meant
            if lenient is not None:  # still not JSON as written: marked like a repair
                read = self.read_value(lenient, fragment, strong=strong)
                read.repaired = True
                return read
            import json_repair  # only for broken JSON

            try:
                value = json_repair.loads(fragment)
            except Exception:  # json-repair raises on some inputs instead of giving up
                value = None
            if not isinstance(value, dict | list) or not value:
                return _Read(problem=f"{_shown(fragment)}: this is not valid JSON and could not be repaired.")
            read = self.read_value(value, fragment, strong=True, unclosed=unclosed)
            read.repaired = True
            return read
        return self.read_value(value, fragment, strong=strong)

    def read_qwen(self, body: str, fragment: str) -> _Read | None:
        """Qwen3-Coder's ``<function=name><parameter=key>value</parameter></function>`` form."""
        matches = list(_QWEN_FUNCTION.finditer(body))
        if not matches:
            return None
        read = _Read()
        for match in matches:
            name = match.group(1)
            if not self._is_tool(name):
                read.problem = read.problem or self._no_such_tool(name, fragment)
                continue
            arguments: dict[str, Any] = {}
            for parameter in _QWEN_PARAMETER.finditer(match.group(2)):
                raw = parameter.group(2)
                # Values are text (the tool's validation reads "2" as a number where one is asked
                # for); only lists and objects are JSON.
                value: Any = raw
                if raw.lstrip().startswith(("{", "[")):
                    with contextlib.suppress(ValueError):
                        value = json.loads(raw)
                arguments[parameter.group(1)] = value
            read.calls.append((name, arguments, None))
        return read


def _scan_objects(
    reader: _Reader, text: str, start: int, end: int, out: list[tuple[int, int, _Read]], *, strong: bool
) -> None:
    """Every balanced ``{...}`` fragment of ``text[start:end]``, read. A ``{`` never closed is a
    stray brace or a call cut off: when complete fragments inside it are calls (or tried to be), they
    are what counts, so a stray ``{`` in prose never swallows the calls after it; else the unclosed
    fragment is read as it is, and json-repair may still read a cut-off call from it."""
    i = text.find("{", start, end)
    while i != -1:
        close = span_end(text[:end], i, "{", "}")
        if close is not None:
            out.append((i, close, reader.read_fragment(text[i:close], strong=strong)))
            i = text.find("{", close, end)
            continue
        inside: list[tuple[int, int, _Read]] = []
        _scan_objects(reader, text, i + 1, end, inside, strong=strong)
        if any(r.calls or r.problem for _, _, r in inside):
            out.extend(inside)
            return
        read = reader.read_fragment(text[i:end], strong=strong, unclosed=True)
        read.unclosed = True
        out.append((i, end, read) if read.calls or read.problem else (i, end, _Read()))
        return


def _outside(pattern: re.Pattern[str], text: str, taken: list[tuple[int, int]]) -> list[re.Match[str]]:
    """The matches of ``pattern`` in the gaps between the ``taken`` spans (sorted)."""
    found: list[re.Match[str]] = []
    pos = 0
    for start, end in [*taken, (len(text), len(text))]:
        found.extend(pattern.finditer(text, pos, start))
        pos = end
    return found


def _regions(text: str) -> list[tuple[str, int, int, int, int]]:
    """Reasoning, tags and fences in order, as ``(kind, outer_start, outer_end, inner_start,
    inner_end)``: a fence inside a tag belongs to the tag, and anything inside ``<think>`` is thought,
    not done (a call drafted while reasoning is not a call)."""
    regions = [("think", m.start(), m.end(), m.start(), m.end()) for m in _THINK.finditer(text)]
    for kind, pattern, group in (("tag", _TAG, 1), ("fence", _FENCE, 2)):
        taken = sorted((r[1], r[2]) for r in regions)
        for match in _outside(pattern, text, taken):
            regions.append((kind, match.start(), match.end(), match.start(group), match.end(group)))
    regions.sort(key=lambda r: r[1])
    return regions


def find_invented_result(text: str, after: int) -> int | None:
    """Where a result the model wrote itself starts in ``text`` after offset ``after`` (None: none)."""
    hits = [m.start() for m in (_INVENTED_TAG.search(text, after), _INVENTED_LINE.search(text, after)) if m]
    return min(hits) if hits else None


def _find_lone_result(text: str, after: int) -> int | None:
    found = (_INVENTED_TAG_LINE.search(text, after), _INVENTED_ALONE_LINE.search(text, after))
    hits = [m.start() for m in found if m]
    return min(hits) if hits else None


def parse_text_calls(
    text: str, offered: Collection[str] | None = None, *, cut_off: bool = False
) -> TextCalls:
    """The calls written in ``text`` (a model's reply), the prose around them, and what could not be read.

    ``offered`` are the tools' names (None: any name counts); ``cut_off`` says the reply hit the output
    token limit, so a call left unclosed at its end is incomplete and gets a ``parse_error``.
    """
    if "{" not in text and "<tool_" not in text and not _INVENTED_ALONE_LINE.search(text):
        return TextCalls(parts=[text] if text.strip() else [], answer=_clean(_THINK.sub("", text)))
    reader = _Reader(offered)
    found: list[tuple[int, int, _Read]] = []
    regions = _regions(text)
    pos = 0
    for kind, outer_start, outer_end, inner_start, inner_end in regions:
        if outer_start < pos:
            continue
        _scan_objects(reader, text, pos, outer_start, found, strong=False)
        pos = outer_end
        if kind == "think":
            found.append((outer_start, outer_end, _Read()))
            continue
        inner: list[tuple[int, int, _Read]] = []
        if kind == "tag":
            qwen = reader.read_qwen(text[inner_start:inner_end], text[outer_start:outer_end])
            if qwen is not None:
                inner.append((inner_start, inner_end, qwen))
            else:
                _scan_objects(reader, text, inner_start, inner_end, inner, strong=True)
                if not inner:
                    problem = f"{_shown(text[outer_start:outer_end])}: no JSON call inside."
                    inner.append((inner_start, inner_end, _Read(problem=problem)))
        else:
            _scan_objects(reader, text, inner_start, inner_end, inner, strong=False)
        # A tag or fence holding nothing but calls goes whole; else only its calls are taken out.
        calls_only = any(r.calls for _, _, r in inner) and _leftover_is_punctuation(
            text, inner_start, inner_end, inner
        )
        if kind == "tag":
            for _, _, read in inner:
                read.tagged = True
        if calls_only or (kind == "tag" and not any(r.calls for _, _, r in inner)):
            # A tag with no call in it is one unreadable fragment, tags and all.
            found.append((outer_start, outer_end, _merge(inner)))
        else:
            found.extend(inner)
    _scan_objects(reader, text, pos, len(text), found, strong=False)
    return _assemble(text, found, cut_off=cut_off)


def _leftover_is_punctuation(text: str, start: int, end: int, inner: list[tuple[int, int, _Read]]) -> bool:
    pos = start
    for s, e, read in inner:
        if not read.calls:
            return False
        if not _PUNCTUATION_ONLY.fullmatch(text, pos, s):
            return False
        pos = e
    return bool(_PUNCTUATION_ONLY.fullmatch(text, pos, end))


def _merge(inner: list[tuple[int, int, _Read]]) -> _Read:
    merged = _Read()
    for _, _, read in inner:
        merged.calls += read.calls
        merged.problem = merged.problem or read.problem
        merged.unclosed = merged.unclosed or read.unclosed
        merged.repaired = merged.repaired or read.repaired
        merged.tagged = merged.tagged or read.tagged
    return merged


def _clean(prose: str) -> str:
    prose = _EMPTY_FENCE.sub("", _CALL_TOKENS.sub("", prose))
    if _PUNCTUATION_ONLY.fullmatch(prose) or _LONE_FENCE.fullmatch(prose):
        return ""
    return prose.strip()


def _assemble(text: str, found: list[tuple[int, int, _Read]], *, cut_off: bool) -> TextCalls:
    result = TextCalls()
    found.sort(key=lambda f: f[0])
    first_call_end = next((end for _, end, read in found if read.calls), None)
    limit = len(text)
    # A made-up result counts only in the prose between fragments, never inside a call's arguments:
    # after a call, a result tag or a line that starts like a result; with no call, a result tag or
    # a line opening with a result label (a reply that "answers" with a result nobody produced).
    search = first_call_end if first_call_end is not None else 0
    finder = find_invented_result if first_call_end is not None else _find_lone_result
    for start, end, _ in [f for f in found if f[1] > search] + [(len(text), len(text), _Read())]:
        hit = finder(text[:start], search)
        if hit is not None:
            limit = hit
            break
        search = max(search, end)
    if limit < len(text):
        result.invented = text[limit:].strip()
    pos = 0
    unread_at = 0
    answer: list[str] = []
    for start, end, read in found:
        if start >= limit:
            break
        if read.problem:
            result.problems.append(read.problem)
            result.tagged_problems = result.tagged_problems or read.tagged
            answer.append(text[unread_at:start])
            unread_at = max(unread_at, end)
        if not read.calls:
            continue
        prose = _clean(text[pos:start])
        if prose:
            result.parts.append(prose)
        for name, arguments, error in read.calls:
            if cut_off and read.unclosed and error is None:
                from agcore.llm import CUT_AT_MAX_TOKENS

                error = CUT_AT_MAX_TOKENS
            result.parts.append(TextCall(name, arguments, error, start, end, read.repaired or read.unclosed))
        pos = end
    prose = _clean(text[pos:limit])
    if prose:
        result.parts.append(prose)
    if unread_at < limit:
        answer.append(text[unread_at:limit])
    result.answer = _clean(_THINK.sub("", "".join(answer)))
    return result
