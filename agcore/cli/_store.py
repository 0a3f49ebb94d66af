"""Where the CLI keeps sessions, and the command that continues one.

``agcore chat`` and ``agcore plan run`` save their sessions as they go in one SQLite file
(``$AGCORE_HOME/sessions.db``, ``AGCORE_HOME`` defaulting to ``~/.agcore``, or ``--db``); on the
LangGraph backend, in the checkpoints beside it (``_checkpoints``). Looking a session up never
creates that file: a mistyped ``--db`` says so instead of leaving an empty database.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from agcore.cli._errors import CliError, ExitCode
from agcore.memory import MemoryStoreError, SqliteSessionStore

__all__ = ["default_db_path", "open_store", "resume_command", "store_error", "unknown_session"]


def default_db_path() -> Path:
    """``$AGCORE_HOME/sessions.db``, ``AGCORE_HOME`` defaulting to ``~/.agcore``."""
    home = os.environ.get("AGCORE_HOME") or "~/.agcore"
    return Path(home).expanduser() / "sessions.db"


@asynccontextmanager
async def open_store(db: Path | None, *, existing: bool) -> AsyncIterator[SqliteSessionStore]:
    """The session store at ``db`` (default: ``default_db_path()``). With ``existing`` (a session is
    being looked up) a missing file is a usage error, not a new empty database."""
    path = db or default_db_path()
    if existing and not path.is_file():
        raise CliError(f"No session database at {path}: check --db (or AGCORE_HOME), or leave out "
                       "the session id to start a new session.", ExitCode.USAGE)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"Cannot create the session store's directory {path.parent}: {exc}",
                       ExitCode.CONFIG) from None
    async with SqliteSessionStore(path) as store:  # it opens the file on first use
        yield store


def store_error(path: Path | None, exc: MemoryStoreError | OSError) -> CliError:
    """A session store that cannot be read or written (exit 3)."""
    return CliError(f"Cannot use the session store {path or default_db_path()}: {exc}", ExitCode.CONFIG)


def unknown_session(session_id: str, db: Path | None, start_with: str) -> CliError:
    path = db or default_db_path()
    return CliError(f"No session {session_id!r} in {path}: check the id, or --db if it was saved elsewhere "
                    f"(run `{start_with}` to start a new one).", ExitCode.USAGE)


def resume_command(*words: str, db: Path | None, model: str | None, base_url: str | None,
                   workspace: Path | None = None, options: Sequence[str] = ()) -> str:
    """The command line that continues a session, with the options that found it, its model and
    ``options`` (the other options it ran with), so it works the same when pasted as it is."""
    args = ["agcore", *words]
    if db is not None:
        args += ["--db", str(db)]
    if model is not None:
        args += ["--model", model]
    if base_url is not None:
        args += ["--base-url", base_url]
    if workspace is not None:
        args += ["--workspace", str(workspace)]
    args += options
    return shlex.join(args)
