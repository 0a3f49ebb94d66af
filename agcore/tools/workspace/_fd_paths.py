"""Race-free access to files below the workspace root, through directory file descriptors.

``PathGuard`` decides *whether* a path may be used; this module makes sure the file actually used is
the one the guard looked at. Checking a path and then opening it by name is a race: between the two,
another process (a command the model started) can swap a directory for a symlink to somewhere else,
and the open follows it. So every file tool walks the guard's answer one component at a time from a
descriptor of the root, opening each directory with ``O_NOFOLLOW | O_DIRECTORY`` relative to its
parent's descriptor, and the last component with ``O_NOFOLLOW`` relative to its parent. A component
that has become a symlink makes the walk fail ("resolves through a symlink"); it is never followed.
Writes stay inside the parent's descriptor too: a temp file created there with ``O_EXCL | O_NOFOLLOW``,
then ``os.replace`` between names of that same directory (a rename replaces a symlink, it does not
write through it). This is how race-free tools on POSIX do it (``openat`` walks, ``renameat``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from agcore._clock import new_id
from agcore.tools._errors import ToolError
from agcore.tools._path_guard import PathDenied, PathGuard

__all__ = [
    "changed_meanwhile",
    "dir_fd",
    "lstat_at",
    "open_redirection",
    "open_regular",
    "parent_fd",
    "read_bytes",
    "remove_dir",
    "remove_file",
    "write_atomic",
]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
_UMASK = os.umask(0o022)
os.umask(_UMASK)


def _swapped(guard: PathGuard, rel: str, component: str) -> PathDenied:
    return PathDenied(
        f"'{rel}' resolves through a symlink at '{component}' (it changed while the tool ran, or is a "
        "link); workspace tools never follow it. Use the real path inside the workspace.",
        path=rel,
    )


@contextlib.contextmanager
def changed_meanwhile(rel: str, outcome: str) -> Iterator[None]:
    """Report a path that vanished or stopped being a directory mid-call (another process changed it)
    as a ``ToolError`` the model can act on, not a raw ``OSError``."""
    try:
        yield
    except (FileNotFoundError, NotADirectoryError) as exc:
        where = f" at '{exc.filename}'" if isinstance(exc.filename, str) else ""
        raise ToolError(
            f"'{rel}' changed while the tool ran ({exc.strerror}{where}), so {outcome}. "
            "Something else (a running command?) is changing it; check with list_dir and try again."
        ) from exc


def _parts(guard: PathGuard, real: Path) -> list[str]:
    rel = guard.relative(real)
    return [] if rel == "." else rel.split("/")


def _open_child_dir(guard: PathGuard, parent: int, name: str, rel: str, done: list[str]) -> int:
    """Open directory ``name`` below ``parent`` without following a symlink; ENOENT passes through."""
    try:
        return os.open(name, _DIRECTORY, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ENOTDIR, errno.ELOOP):
            where = "/".join([*done, name])
            try:
                mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
            except OSError:
                mode = 0
            if stat.S_ISLNK(mode) or exc.errno == errno.ELOOP:
                raise _swapped(guard, rel, where) from exc
            if stat.S_ISREG(mode):
                message = f"'{where}' is a file, not a directory, so '{rel}' cannot be reached"
                raise ToolError(message) from exc
            # gone, or a directory again: it changed between the open and the look
            raise FileNotFoundError(errno.ENOENT, "it changed while being opened", where) from exc
        raise


@contextlib.contextmanager
def dir_fd(guard: PathGuard, real: Path, *, create: list[Path] | None = None) -> Iterator[int]:
    """A descriptor of the directory ``real`` (a path the guard resolved), reached without following
    any symlink. With ``create`` (a list), missing directories are made and appended to it."""
    rel = guard.relative(real)
    fd = os.open(guard.root, _DIRECTORY)
    done: list[str] = []
    try:
        for name in _parts(guard, real):
            try:
                child = _open_child_dir(guard, fd, name, rel, done)
            except FileNotFoundError:
                if create is None:
                    raise
                try:
                    os.mkdir(name, dir_fd=fd)
                    create.append(guard.root.joinpath(*done, name))
                except FileExistsError:
                    pass  # made meanwhile: the open below checks what it is
                child = _open_child_dir(guard, fd, name, rel, done)
            os.close(fd)
            fd = child
            done.append(name)
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def parent_fd(guard: PathGuard, real: Path, *, create: list[Path] | None = None) -> Iterator[tuple[int, str]]:
    """``(descriptor of the parent directory, final name)`` for a file path the guard resolved."""
    if real == guard.root:
        raise ToolError("the workspace root is a directory, not a file")
    with dir_fd(guard, real.parent, create=create) as fd:
        yield fd, real.name


def lstat_at(guard: PathGuard, real: Path) -> os.stat_result | None:
    """The entry's own status (a symlink is reported as one), or None when it does not exist."""
    try:
        if real == guard.root:
            return os.stat(guard.root)
        with parent_fd(guard, real) as (fd, name):
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def open_regular(guard: PathGuard, real: Path) -> int | None:
    """A read descriptor of the regular file ``real`` (None: it does not exist). A directory raises
    ``IsADirectoryError``; a symlink, FIFO, device or socket is refused, never opened through."""
    rel = guard.relative(real)
    if real == guard.root:
        raise IsADirectoryError(errno.EISDIR, "is a directory", rel)
    try:
        with parent_fd(guard, real) as (parent, name):
            # O_NONBLOCK: a FIFO swapped in must not hang the tool; fstat below rejects it anyway
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC, dir_fd=parent)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _swapped(guard, rel, rel) from exc
        raise
    mode = os.fstat(fd).st_mode
    if stat.S_ISREG(mode):
        os.set_blocking(fd, True)
        return fd
    os.close(fd)
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", rel)
    raise PathDenied(
        f"'{rel}' is not a regular file; workspace tools only read and write regular files", path=rel
    )


_REDIRECT_FLAGS = {
    "rb": os.O_RDONLY,
    "wb": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "ab": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
}


def open_redirection(guard: PathGuard, real: Path, mode: str) -> int:
    """A descriptor for a command's redirection (``rb``, ``wb`` or ``ab``) of the file ``real``, opened
    in its parent's descriptor with ``O_NOFOLLOW``: a link swapped in meanwhile is refused. Only a
    regular file is accepted (a FIFO swapped in would otherwise block the tool)."""
    rel = guard.relative(real)
    flags = _REDIRECT_FLAGS[mode] | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC
    try:
        with parent_fd(guard, real) as (parent, name):
            fd = os.open(name, flags, 0o666, dir_fd=parent)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _swapped(guard, rel, rel) from exc
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise PathDenied(f"'{rel}' is not a regular file; redirect to or from a regular file", path=rel)
    os.set_blocking(fd, True)
    return fd


def read_bytes(guard: PathGuard, real: Path) -> bytes | None:
    """The content of the regular file ``real``, or None when it does not exist."""
    fd = open_regular(guard, real)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def write_atomic(
    guard: PathGuard, real: Path, data: bytes, *, mode: int | None = None, created: list[Path] | None = None
) -> int | None:
    """Replace the file ``real`` with ``data`` all at once, inside its parent's descriptor; returns the
    previous size (None: it is new). Missing parents are made when ``created`` is a list (they are
    appended to it). ``mode`` defaults to the old file's permissions, else ``0o666 & ~umask``."""
    with parent_fd(guard, real, create=created) as (parent, name):
        try:
            old = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and stat.S_ISDIR(old.st_mode):
            raise ToolError(f"'{guard.relative(real)}' is a directory; give a file path inside it")
        if mode is None:
            mode = stat.S_IMODE(old.st_mode) if old is not None and stat.S_ISREG(old.st_mode) else None
        final_mode = mode if mode is not None else 0o666 & ~_UMASK
        temp, fd = _create_temp(parent, name)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fchmod(handle.fileno(), final_mode)
                os.fsync(handle.fileno())
            os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=parent)
            raise
        return old.st_size if old is not None and stat.S_ISREG(old.st_mode) else None


def _create_temp(parent: int, name: str) -> tuple[str, int]:
    """A new file next to ``name``, created exclusively (never an existing file or a symlink)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC
    base = new_id()[:12]
    for attempt in range(100):  # ids may repeat under a deterministic (replay) clock
        temp = f".{name[:200]}.{base}{attempt or ''}.tmp"
        try:
            return temp, os.open(temp, flags, 0o600, dir_fd=parent)
        except FileExistsError:
            continue
    raise ToolError(f"could not create a temporary file next to '{name}': too many exist already")


def remove_file(guard: PathGuard, real: Path) -> None:
    """Unlink the entry ``real`` in its parent's descriptor (a symlink is removed, not followed)."""
    with parent_fd(guard, real) as (parent, name):
        os.unlink(name, dir_fd=parent)


def remove_dir(guard: PathGuard, real: Path) -> None:
    """Remove the directory ``real`` if it is empty (``OSError`` otherwise)."""
    with parent_fd(guard, real) as (parent, name):
        os.rmdir(name, dir_fd=parent)
