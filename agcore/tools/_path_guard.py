"""``PathGuard``: every path a tool touches resolves to a real path inside one root directory.

The guard works on the *real* path (``os.path.realpath``: ``..`` and symlinks resolved component by
component, in order), so a symlink inside the root that points outside, or a path that walks through
a symlinked directory out of the root, is refused however it is spelled. Spellings that look like an
attempt to leave the root, or that a model most likely meant as something else (``~``, URL encoding,
backslashes, Unicode look-alikes of ``.`` and ``/``), are refused with a reason rather than silently
taken as literal names.

The guard is a check, not a sandbox: a path can still change between the check and its use (a race
with another process swapping a directory for a symlink). The workspace file tools therefore use
the guard's answer only through directory descriptors (``agcore.tools.workspace._fd_paths``), which
refuse a component that has become a symlink instead of following it.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import NoReturn

from agcore.tools._errors import ToolDenied
from agcore.tools._secrets import NOT_SECRET_NAME_PATTERNS, path_deny_patterns

__all__ = [
    "DEFAULT_DENY", "DEFAULT_DENY_EXCEPT", "DEFAULT_DENY_WRITE", "PathDenied", "PathGuard", "glob_match",
]  # fmt: skip

# Secrets: read or write both refused. A pattern without "/" matches a file or directory name at any
# depth (gitignore style); a pattern with "/" is anchored at the root. Built from ``_secrets``, the
# list ``CommandGuard`` and the sandbox use too, so ``read_file`` and ``cat`` refuse the same files.
DEFAULT_DENY: tuple[str, ...] = path_deny_patterns()
# What the deny patterns catch but is not secret (public keys, ``.env.example``): matched against the
# same path component the deny pattern matched, so ``.ssh/id_rsa.pub`` stays denied with ``.ssh``.
DEFAULT_DENY_EXCEPT: tuple[str, ...] = NOT_SECRET_NAME_PATTERNS
# Readable, but tools must not change them: git's own database.
DEFAULT_DENY_WRITE: tuple[str, ...] = (".git/**",)

_URL_ENCODED = re.compile(r"%(2e|2f|5c|00)", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class PathDenied(ToolDenied):
    """A path was refused by a ``PathGuard``; ``path`` is the path as given."""

    def __init__(self, reason: str, *, path: str) -> None:
        super().__init__(reason)
        self.path = path


def glob_match(pattern: str, relative_path: str) -> bool:
    """Whether a root-relative POSIX path matches a glob pattern (``*``, ``?``, ``[...]``, ``**``).

    ``*`` stays within one path component; ``**`` spans any number of components, including none.
    A pattern without "/" matches the name at any depth. A match on a directory covers everything
    below it (``build`` matches ``build/x/y.o``). Matching ignores case: on case-insensitive file
    systems ``.ENV`` is ``.env``.
    """
    regex = _compile_glob(pattern)
    parts = relative_path.strip("/").split("/")
    return any(regex.fullmatch("/".join(parts[:i])) for i in range(len(parts), 0, -1))


@lru_cache(maxsize=512)
def _compile_glob(pattern: str) -> re.Pattern[str]:
    pattern = pattern.strip()
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.strip("/")
    if not anchored:
        pattern = "**/" + pattern
    return re.compile(glob_to_regex(pattern), re.IGNORECASE | re.DOTALL)


def glob_to_regex(pattern: str) -> str:
    """An anchored-glob -> regex translation shared by the guard and the ``glob`` tool."""
    out: list[str] = []
    parts = pattern.split("/")
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            if not last:
                out.append("(?:[^/]*/)*")  # zero or more whole components
            elif out:
                out[-1] = "(?:/.*)?"  # "dir/**": the directory itself and everything below it
            else:
                out.append(".*")
            continue
        i = 0
        while i < len(part):
            char = part[i]
            if char == "*":
                out.append("[^/]*")
            elif char == "?":
                out.append("[^/]")
            elif char == "[":
                end = part.find("]", i + 2)
                if end == -1:
                    out.append(re.escape(char))
                else:
                    body = part[i + 1 : end]
                    negate = body.startswith(("!", "^"))
                    body = body[1:] if negate else body
                    out.append(("[^" if negate else "[") + body.replace("\\", "\\\\") + "]")
                    i = end
            else:
                out.append(re.escape(char))
            i += 1
        if not last:
            out.append("/")
    return "".join(out)


class PathGuard:
    """Resolves paths against ``root`` and refuses any that would leave it or that the deny-lists cover.

    ``deny`` patterns are refused for reading and writing, ``deny_write`` ones for writing only (see
    ``glob_match`` for the pattern rules); ``deny_except`` patterns lift a denial for the path or
    directory they match (``*.pub``: public keys are not secrets). Both are matched against the path
    as given (normalised) and against the real path it resolves to, so a symlink cannot launder a denied name.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        deny: Iterable[str] = DEFAULT_DENY,
        deny_write: Iterable[str] = DEFAULT_DENY_WRITE,
        deny_except: Iterable[str] = DEFAULT_DENY_EXCEPT,
    ) -> None:
        resolved = Path(os.path.realpath(os.fspath(root)))
        if not resolved.is_dir():
            raise ValueError(
                f"workspace root {os.fspath(root)!r} is not an existing directory; create it first"
            )
        self.root = resolved
        self.deny = tuple(deny)
        self.deny_write = tuple(deny_write)
        self.deny_except = tuple(deny_except)

    def __repr__(self) -> str:
        return f"PathGuard(root={str(self.root)!r}, deny={self.deny!r}, deny_write={self.deny_write!r})"

    # ------------------------------------------------------------------------------------ public

    def resolve(self, path: str | os.PathLike[str], *, for_write: bool = False) -> Path:
        """The real absolute path inside the root, or ``PathDenied`` saying why and what is allowed."""
        text = self._as_text(path)
        self._check_spelling(text)
        candidate = Path(text) if os.path.isabs(text) else self.root / text
        lexical = Path(os.path.normpath(candidate))
        try:
            real = Path(os.path.realpath(candidate))
        except OSError as exc:  # a component changed while realpath read it (a racing rename)
            self._deny(text, f"'{text}' changed while it was being checked ({exc.strerror}); try again")
        if not self.contains(real):
            through = " (it resolves through a symlink)" if self.contains(lexical) else ""
            self._deny(
                text,
                f"'{text}' is outside the workspace{through}: paths must stay inside {self.root}. "
                "Use a path relative to the workspace root, e.g. 'src/main.py'.",
            )
        self._check_kind(text, real)
        checked = [self.relative(real)]
        if self.contains(lexical):
            checked.append(self.relative(lexical))
        patterns = self.deny + (self.deny_write if for_write else ())
        for rel in checked:
            pattern = self._denying_pattern(rel, patterns)
            if pattern is not None:
                write_only = pattern in self.deny_write and pattern not in self.deny
                kind = "writing to" if write_only else "access to"
                self._deny(
                    text,
                    f"{kind} '{rel}' is denied by the workspace policy (pattern '{pattern}'); "
                    "it may hold secrets or tool-internal state. Work with other files.",
                )
        return real

    def contains(self, path: Path) -> bool:
        """Whether an absolute, already-resolved path is the root or lies below it."""
        return path == self.root or path.is_relative_to(self.root)

    def relative(self, path: Path) -> str:
        """The root-relative POSIX form of a path inside the root (``.`` for the root itself)."""
        rel = path.relative_to(self.root)
        return rel.as_posix() if rel.parts else "."

    def is_denied(self, relative_path: str, *, for_write: bool = False) -> bool:
        """Whether a root-relative path falls under the deny-lists (used to filter listings)."""
        patterns = self.deny + (self.deny_write if for_write else ())
        return self._denying_pattern(relative_path, patterns) is not None

    def _denying_pattern(self, relative_path: str, patterns: tuple[str, ...]) -> str | None:
        """The pattern that denies a root-relative path (matching it or a directory above it), unless
        an exception matches that same path or directory."""
        if relative_path == ".":
            return None
        parts = relative_path.strip("/").split("/")
        for end in range(1, len(parts) + 1):
            prefix = "/".join(parts[:end])
            for pattern in patterns:
                if _compile_glob(pattern).fullmatch(prefix) and not any(
                    _compile_glob(e).fullmatch(prefix) for e in self.deny_except
                ):
                    return pattern
        return None

    # ----------------------------------------------------------------------------------- checks

    def _as_text(self, path: object) -> str:
        if isinstance(path, bytes):
            self._deny(repr(path), "paths must be text, not bytes")
        try:
            text = os.fspath(path)  # type: ignore[call-overload]
        except TypeError:
            self._deny(repr(path), f"a path must be a string, got {type(path).__name__}")
        if not isinstance(text, str):
            self._deny(repr(path), "paths must be text, not bytes")
        return text

    def _check_spelling(self, text: str) -> None:
        if not text.strip():
            self._deny(
                text, "the path is empty; use '.' for the workspace root or a relative path like 'src/a.py'"
            )
        if "\x00" in text:
            self._deny(text, "the path contains a NUL byte, which no file name can hold")
        if _CONTROL.search(text):
            self._deny(text, "the path contains control characters (newline, tab, escape...); remove them")
        if text.startswith("~"):
            self._deny(
                text,
                "'~' is not expanded and the home directory is outside the workspace; use a relative path",
            )
        if os.sep == "/" and "\\" in text:
            self._deny(text, "backslashes are not path separators here; use '/' between path components")
        if _URL_ENCODED.search(text):
            self._deny(text, "the path looks URL-encoded (%2e, %2f...); pass the plain path, e.g. 'src/a.py'")
        self._check_lookalikes(text)

    def _check_lookalikes(self, text: str) -> None:
        # NFKC folds full-width "\uff0e\uff0e\uff0f" or "\u2024\u2024/" into "../": on disk they are harmless
        # literal names, but a model writing them meant something else and should be told.
        folded = unicodedata.normalize("NFKC", text)
        if folded == text:
            return
        raw_parts = PurePosixPath(text).parts
        folded_parts = PurePosixPath(folded.replace("\\", "/")).parts
        if (
            len(raw_parts) != len(folded_parts)
            or any(p in (".", "..") for p in folded_parts)
            or (folded.startswith(("/", "~")) and not text.startswith(("/", "~")))
        ):
            self._deny(
                text,
                "the path uses Unicode look-alikes of '.', '/' or '~' "
                f"(it reads as '{folded}'); write the path with plain ASCII separators",
            )

    def _check_kind(self, text: str, real: Path) -> None:
        try:
            mode = os.stat(real).st_mode
        except FileNotFoundError:
            return
        except NotADirectoryError:
            return  # a file used as a directory: the tool reports it
        except OSError as exc:
            self._deny(text, f"'{text}' cannot be checked ({exc.strerror}); use a different path")
        if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
            return
        kind = (
            "a device file"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a FIFO (named pipe)"
            if stat.S_ISFIFO(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "a special file"
        )
        self._deny(
            text, f"'{text}' is {kind}; workspace tools only read and write regular files and directories"
        )

    def _deny(self, text: str, reason: str) -> NoReturn:
        raise PathDenied(reason, path=text)
