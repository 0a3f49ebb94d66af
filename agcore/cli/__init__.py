"""``agcore``: the command line (needs the ``cli`` extra: ``pip install 'agcore[cli]'``).

Commands::

    agcore run "task" [--model SPEC] [--base-url URL] [--workspace DIR] [--yes] [--no-plugins]
    agcore chat [--session ID] [--db PATH] [--model SPEC] [--base-url URL] [--workspace DIR] [--yes]
    agcore plan run FILE [--workspace DIR] [--yes] [--model SPEC] [--base-url URL]
    agcore plan draft "goal" [--save FILE] [--model SPEC] [--base-url URL] [--workspace DIR]
    agcore models [--provider NAME]
    agcore plugins

``--model`` takes ``vendor:model`` (``anthropic:claude-sonnet-4-6``, ``openai:gpt-5.5``,
``ollama:llama3.1``), a bare model id from the registry, or ``scripted:PATH`` (a JSON/YAML script of
replies, see ``agcore.testing.load_script``: offline runs and tests). Without ``--model`` the
``AGCORE_MODEL`` environment variable is used, else Anthropic or OpenAI by which API key is set.
``--base-url`` points at an OpenAI-compatible server (vLLM, llama.cpp, LM Studio...). Chat sessions are
kept in ``--db`` (default ``$AGCORE_HOME/sessions.db``, ``AGCORE_HOME`` defaulting to ``~/.agcore``).

Exit codes:

* 0: done (and Ctrl-C or Ctrl-D at an empty chat prompt)
* 1: the task failed (the turn ended with an error or a limit; a plan step failed)
* 2: usage error (bad option or argument, unreadable or invalid plan file, unknown session id)
* 3: configuration error (missing API key, bad model spec or script file, invalid plugin, no cli extra)
* 4: the provider is unreachable or its API failed (connection, timeout, server or rate-limit errors)
* 130: interrupted (Ctrl-C during ``agcore run`` or ``agcore plan``)
"""

from __future__ import annotations

import sys

__all__ = ["main"]

_MISSING_EXTRA = (
    "agcore's command line needs typer and rich, which are not installed: "
    "install agcore[cli] (pip install 'agcore[cli]')."
)


def main(argv: list[str] | None = None) -> None:
    """Run the ``agcore`` command line with ``argv`` (default: ``sys.argv[1:]``); exits the process."""
    # typer and rich are an extra: import them only here, so `import agcore.cli` always works and a
    # missing extra is a one-line message instead of a traceback.
    try:
        import rich  # noqa: F401
        import typer  # noqa: F401
    except ImportError:
        print(_MISSING_EXTRA, file=sys.stderr)
        raise SystemExit(3) from None
    from agcore.cli._app import run_app

    run_app(argv)
