"""``CommandGuard``'s checks of the files a command writes: redirections, and the operands of programs
that delete, rewrite or create files, against the workspace (or, without one, the system and home
paths). Each function raises ``CommandDenied`` with the reason, or returns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from agcore.tools._command_code import check_not_secret
from agcore.tools._command_denied import deny, program_name
from agcore.tools._command_gaps import extra_write_targets
from agcore.tools._command_paths import (
    ALLOWED_DEVICES,
    is_inside,
    is_system_path,
    is_vital,
    resolve_glob,
    resolve_path,
)
from agcore.tools._command_reach import find_selects, option_deletions, option_write_targets
from agcore.tools._command_rules import rm_like_targets, write_targets
from agcore.tools._shell_syntax import SimpleCommand, Word

__all__ = ["check_deletion", "check_redirects", "check_write_path", "check_write_targets"]

# Git's metadata: written now, read or executed later by the user's own git outside any sandbox
# (hooks, config, commondir, info/attributes filters, worktrees/*/config...). Any ".git" component.
_GIT_DIR = ".git"


def check_redirects(
    simple: SimpleCommand, cwd: Path, workspace: Path | None, homes: Iterable[Path], shown: str
) -> None:
    """Where a command's redirections write (in the workspace, not a device or socket) and read
    (no credential)."""
    for operator, target in simple.redirects:
        base = operator.lstrip("0123456789")
        if base in ("<<", "<<-", "<<<"):
            continue
        if base in ("<", "<>") and not target.dynamic:
            check_not_secret(target.text, cwd, homes, shown)
        if base in ("<", "<&"):
            continue
        if base in (">&",) and (target.text.isdigit() or target.text == "-"):
            continue  # 2>&1: a file-descriptor copy, not a file
        if target.dynamic:
            deny(
                shown,
                f"the redirection target '{target.text}' is computed at run time; write it literally",
            )
        check_write_path(target.text, cwd, workspace, shown, what="redirection")


def check_write_targets(
    argv: tuple[str, ...],
    words: Sequence[Word] | None,
    cwd: Path,
    workspace: Path | None,
    *,
    from_xargs: bool,
    shown: str,
) -> None:
    """The files a program deletes, rewrites or creates stay in the workspace (or, without one, off
    the system and home paths)."""
    program = program_name(argv)
    recursive, deleted = rm_like_targets(argv)
    removed = option_deletions(argv)  # cmake -E rm/remove_directory/rename
    if removed is not None:
        recursive, deleted = removed
    written = write_targets(argv) + option_write_targets(argv) + extra_write_targets(argv)
    if recursive is not None or written:
        computed = (
            [w.text for w in words[1:] if w.dynamic] if words is not None else [a for a in argv if "$" in a]
        )
        if computed:
            deny(
                shown,
                f"'{program}' changes files and its operand '{computed[0]}' is computed at run time, so "
                "the guard cannot see which; write the paths literally",
            )
    if recursive is not None:
        if recursive and from_xargs:
            deny(shown, f"recursive '{program}' with operands from xargs cannot be checked; list the paths")
        # find -name X -delete removes matches only, so the workspace root may be its starting point.
        selective = program == "find" and find_selects(argv)
        for target in deleted:
            check_deletion(target, cwd, workspace, shown, recursive=recursive, selective=selective)
    for target in written:
        check_write_path(target, cwd, workspace, shown, what=f"'{program}'")


def check_deletion(
    target: str, cwd: Path, workspace: Path | None, shown: str, *, recursive: bool, selective: bool = False
) -> None:
    path = resolve_glob(target, cwd)
    text = str(path)
    if recursive and is_vital(text):
        deny(
            shown,
            f"this would recursively delete or rewrite '{text}', a system or home directory; "
            "only work on paths inside the workspace",
        )
    if workspace is not None:
        if recursive and not selective and (path == workspace or workspace.is_relative_to(path)):
            deny(
                shown,
                f"this would recursively affect the whole workspace ('{target}' is the workspace root "
                "or contains it); name the files or directories inside it",
            )
        if not is_inside(path, workspace):
            deny(
                shown,
                f"'{target}' is outside the workspace {workspace}; only change files inside it",
            )
    elif recursive and is_system_path(text):
        deny(shown, f"'{target}' is a system path; do not change it")


def check_write_path(target: str, cwd: Path, workspace: Path | None, shown: str, *, what: str) -> None:
    path = resolve_path(target, cwd)
    text = str(path)
    if text.startswith("/dev/"):
        if text.startswith(("/dev/tcp/", "/dev/udp/")):
            deny(shown, f"{what} to '{target}' opens a network connection; that is not allowed")
        if text in ALLOWED_DEVICES or text.startswith("/dev/fd/"):
            return
        deny(
            shown,
            f"{what} writes to the device '{target}', which could overwrite a disk; write to a file",
        )
    if workspace is not None:
        if not is_inside(path, workspace):
            deny(
                shown,
                f"{what} writes to '{target}', outside the workspace {workspace}; write inside it "
                "(use a relative path)",
            )
        if _GIT_DIR in path.relative_to(workspace).parts or _GIT_DIR in Path(target).parts:
            deny(
                shown,
                f"{what} writes to '{target}', inside git's metadata (.git), which git runs or reads "
                "later outside any sandbox (hooks, config, commondir); change the repository with git "
                "commands (git add, git commit) and leave .git itself to the user",
            )
    elif is_system_path(text) or is_vital(text):
        deny(shown, f"{what} writes to '{target}', a system or home-configuration path; write elsewhere")
