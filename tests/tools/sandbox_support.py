"""Shared by the sandbox tests: whether bubblewrap works here (a CI failure, never a skip, when it
does not), a scratch directory the sandbox's private /tmp does not hide, and process checks."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agcore.tools._sandbox import probe_bwrap


def require_bwrap() -> None:
    """Skip locally, FAIL in CI (CI=true), when bubblewrap cannot run here."""
    probe = probe_bwrap()
    if probe.path is not None:
        return
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI must run the sandbox tests, but bubblewrap does not work: {probe.reason}")
    pytest.skip(f"bubblewrap does not work here: {probe.reason}")


def scratch_dir() -> Iterator[Path]:
    """A fresh directory under /var/tmp, removed afterwards.

    Not under /tmp on purpose: the sandbox mounts a private, empty /tmp, so canaries under the
    pytest tmp dir would be hidden from a sandboxed command anyway and the read-only bind of the
    rest of the machine would go untested.
    """
    base = "/var/tmp" if os.path.isdir("/var/tmp") and os.access("/var/tmp", os.W_OK) else None
    path = Path(tempfile.mkdtemp(prefix="agcore-sandbox-test-", dir=base))
    try:
        yield path
    finally:
        for root, dirs, _files in os.walk(path):  # a test may have made something read-only
            for name in dirs:
                os.chmod(os.path.join(root, name), 0o755)
        shutil.rmtree(path, ignore_errors=True)


def processes_with(marker: str) -> list[str]:
    """Command lines of live (non-zombie) processes whose arguments contain ``marker``."""
    found: list[str] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/cmdline").read_bytes()
            cmdline = raw.replace(b"\0", b" ").decode("utf-8", "replace")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker in cmdline and state != "Z":
            found.append(f"{entry}: {cmdline}")
    return found
