"""Run a command with some programs missing from PATH, as on a machine that lacks them.

    python -m tests.tools.hide_programs rg -- python -m pytest -q tests/tools/test_sandbox_benign.py
    python -m tests.tools.hide_programs rg bwrap -- python -m pytest -q tests/tools

PATH becomes one temporary directory of symlinks to every program of the current PATH except the
named ones (the first of each name wins, as the shell would find it), so ``shutil.which`` and the
sandbox's own lookups see the machine as it would be without them. The directory is under /var/tmp
where it can be: the sandbox's private /tmp would hide a PATH directory under /tmp from commands.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path


def path_without(hidden: set[str], directory: Path) -> str:
    """Fill ``directory`` with links to every program on PATH but ``hidden``; returns the new PATH."""
    for entry in os.environ.get("PATH", os.defpath).split(os.pathsep):
        try:
            names = sorted(os.listdir(entry))
        except OSError:
            continue
        for name in names:
            link = directory / name
            target = Path(entry) / name
            if name in hidden or os.path.lexists(link) or not os.access(target, os.X_OK):
                continue
            link.symlink_to(target)
    return str(directory)


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") == 0 or argv[-1] == "--":
        print(__doc__, file=sys.stderr)
        return 2
    split = argv.index("--")
    hidden, command = set(argv[:split]), argv[split + 1 :]
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="agcore-path-", dir=base) as directory:
        env = {**os.environ, "PATH": path_without(hidden, Path(directory))}
        return subprocess.run(command, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
