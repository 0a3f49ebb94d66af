"""The OS sandbox ``run_command`` runs every process in: bubblewrap (``bwrap``) on Linux.

``CommandGuard`` reads what a command says; this is what holds when the guard misses something
(a script, an interpreter one-liner, a quoting trick). Each process the workspace starts runs as

    bwrap --dev /dev --proc /proc --tmpfs /tmp                    an empty root; private /tmp
          --ro-bind /usr /usr --ro-bind /etc /etc ...             the system's programs and libraries
          --ro-bind PYTHON PYTHON --ro-bind TOOLS TOOLS ...       agcore's Python, toolchains, readable=
          --bind WORKSPACE WORKSPACE --bind HOME HOME              the writable trees (HOME: private)
          --ro-bind WORKSPACE/.git/config ...                     except what git runs later, unsandboxed
          --tmpfs ~/.ssh --ro-bind /dev/null ~/.netrc ...         credentials hidden
          --ro-bind /dev/null WORKSPACE/x.sock ...                Unix sockets in the workspace masked
          --unshare-user --unshare-pid --unshare-ipc --unshare-uts [--unshare-net]
          --cap-drop ALL --die-with-parent [--new-session] --remount-ro / --chdir CWD -- argv

What is mounted, and why, is ``_sandbox_view``'s: nothing of the user's but the workspace and what
``readable`` names, so a command cannot read (and send to the model vendor) files it was not given.

The fresh PID namespace is what makes a timeout final: when bwrap is killed (or the command's main
process exits) the kernel kills every process left in the namespace, background children included.
``--new-session`` keeps the command off agcore's controlling terminal when it has one (no ``TIOCSTI``
keystroke injection into the user's shell).
The git control files that exist (``.git/config``, ``hooks``, ``commondir``, ``info``, ``worktrees``,
``modules``, or a ``.git`` file) stay read-only because the user's own git runs or reads them later
outside any sandbox (the escape Claude Code's sandbox runtime and Codex close the same way); those a
command creates are checked after it (``_git_traps.GitTrapCheck``).

A user namespace is always asked for (``--unshare-user``): bwrap skips it on its own when run as
root, and root in a container without ``CAP_SYS_ADMIN`` then cannot make the other namespaces (what
Codex's users hit until it did the same). Only where that fails but the plain variant works (root
with ``CAP_SYS_ADMIN`` and user namespaces disabled) is ``--unshare-user-try`` used.

Modes: ``"auto"`` (default) sandboxes where bwrap works and otherwise runs guard-only, saying so once
in the log; ``"required"`` refuses to run commands without the sandbox; ``"off"`` is guard-only on
purpose. Whether bwrap works is probed once per process by running it with the same flags (containers
without user namespaces, or with AppArmor's userns restriction, fail there rather than on every call).
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agcore.tools._errors import ToolError
from agcore.tools._git_traps import pinned_git_dir, protected_paths
from agcore.tools._sandbox_view import SYSTEM_DIRS, SandboxView, system_mounts
from agcore.tools._secrets import existing_secret_paths, homes

__all__ = [
    "GUARD_ONLY_GAPS",
    "SANDBOX_MODES",
    "BwrapSandbox",
    "SandboxMode",
    "SandboxUnavailable",
    "probe_bwrap",
    "select_sandbox",
]

SandboxMode = Literal["auto", "required", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("auto", "required", "off")
ENV_VAR = "AGCORE_SANDBOX"

_log = logging.getLogger("agcore.tools.sandbox")
_warned: set[str] = set()

_BASE_FLAGS = (
    "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
    "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
    "--cap-drop", "ALL",
)  # fmt: skip
# What guard-only mode does not do that the sandbox does, said at start (``agcore run``).
GUARD_ONLY_GAPS: tuple[str, ...] = (
    "reads are not confined: a script or approved one-liner can read any file you can",
    "writes by scripts and approved one-liners are not confined to the workspace",
    "no network isolation: only the guard's reading of commands stands in the way",
    "no PID namespace: the command's process group and the processes carrying its tag are killed "
    "when it ends; one that leaves both survives",
    "Unix sockets in the workspace are not masked",
)
_USER_NAMESPACE = ("--unshare-user", "--unshare-user-try")  # tried in this order


class SandboxUnavailable(ToolError):
    """``sandbox="required"`` but no working sandbox exists here; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"commands must run in a sandbox (sandbox='required') but none is available: {reason}. "
            "Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) where user namespaces are "
            "allowed, or set sandbox='auto' to run guard-only."
        )
        self.reason = reason


@dataclass(frozen=True, slots=True)
class BwrapProbe:
    """The outcome of trying bwrap once: its path and user-namespace flag when it works, else why not."""

    path: str | None
    reason: str
    user_namespace: str = "--unshare-user"


@functools.cache
def probe_bwrap(executable: str | None = None) -> BwrapProbe:
    """Run ``bwrap ... true`` once with the flags real commands get; cached per process."""
    if sys.platform != "linux":
        return BwrapProbe(None, f"no sandbox is implemented for {sys.platform} (bubblewrap is Linux-only)")
    path = executable or shutil.which("bwrap")
    if path is None:
        return BwrapProbe(None, "bubblewrap (bwrap) is not installed")
    true = os.path.realpath(shutil.which("true") or "/bin/true")  # a PATH dir may be hidden inside
    message = ""
    for flag in _USER_NAMESPACE:
        try:
            done = subprocess.run(
                [path, flag, *_BASE_FLAGS, *system_mounts(), "--unshare-net", "--", true],
                capture_output=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return BwrapProbe(None, f"{path} could not be run ({exc})")
        if done.returncode == 0:
            return BwrapProbe(path, "", flag)
        message = message or done.stderr.decode("utf-8", "replace").strip() or f"exit code {done.returncode}"
    return BwrapProbe(None, f"{path} does not work here ({message}); {_namespace_hint()}")


def _namespace_hint() -> str:
    """What usually stops bwrap, read from the kernel's settings where they say it."""

    def setting(name: str) -> str:
        try:
            with open(f"/proc/sys/{name}") as handle:
                return handle.read().strip()
        except OSError:
            return ""

    if setting("kernel/apparmor_restrict_unprivileged_userns") == "1":
        return (
            "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns"
            "=1, Ubuntu 23.10+): give bwrap an AppArmor profile that allows userns"
        )
    if setting("kernel/unprivileged_userns_clone") == "0" or setting("user/max_user_namespaces") == "0":
        return "user namespaces are disabled (kernel.unprivileged_userns_clone / user.max_user_namespaces)"
    return (
        "user namespaces may be blocked (in Docker, the default seccomp profile blocks them: run the "
        "container with --security-opt seccomp=unconfined, or use sandbox='off' inside it)"
    )


class BwrapSandbox:
    """Builds the bwrap command line that confines one process to a workspace (see the module doc)."""

    def __init__(
        self, executable: str, user_namespace: str = "--unshare-user", view: SandboxView | None = None
    ) -> None:
        self.executable = executable
        self.user_namespace = user_namespace
        self.view = view or SandboxView()

    def __repr__(self) -> str:
        return f"BwrapSandbox({self.executable!r})"

    def wrap(
        self,
        argv: Sequence[str],
        *,
        workspace: Path,
        cwd: Path,
        allow_network: bool,
        home_dirs: Iterable[Path] = (),
        masked_sockets: Iterable[Path] = (),
        private_home: Path | None = None,
        env: Mapping[str, str] | None = None,
        parent_process: bool = False,
    ) -> list[str]:
        """The command line that runs ``argv`` in ``cwd`` inside the sandbox; ``masked_sockets``
        (Unix sockets in the workspace, see ``_sockets``) get ``/dev/null`` mounted over them;
        ``private_home`` (the command's ``HOME``, agcore's own directory) is writable too; ``env`` (the
        command's environment) names the toolchains and PATH directories it may read."""
        args = [self.executable, self.user_namespace, *_BASE_FLAGS, *system_mounts(), "--die-with-parent"]
        if has_controlling_terminal():
            args.append("--new-session")
        if not allow_network:
            args.append("--unshare-net")
        shown = [Path(d) for d in SYSTEM_DIRS if os.path.isdir(d)]
        for readable in self.view.paths(env or {}, workspace):
            args += ["--ro-bind", str(readable), str(readable)]
            shown.append(readable)
        args += ["--bind", str(workspace), str(workspace)]
        shown.append(workspace)
        if private_home is not None:
            args += ["--bind", str(private_home), str(private_home)]
        # a readable directory is searched for credentials as a home is (~/.aws, .netrc, ...)
        for secret in existing_secret_paths([*homes(), *home_dirs, *self.view.readable]):
            visible = any(secret == root or secret.is_relative_to(root) for root in shown)
            if not visible or workspace.is_relative_to(secret):
                continue  # absent from the sandbox anyway / the user chose to work in there
            if secret.is_dir():
                args += ["--tmpfs", str(secret), "--remount-ro", str(secret)]
            else:
                args += ["--ro-bind", os.devnull, str(secret)]
        pinned = pinned_git_dir(workspace)
        if pinned is not None:  # before the read-only binds inside it, which must stay on top
            args += ["--bind", str(pinned), str(pinned)]
        for protected in protected_paths(workspace):
            args += ["--ro-bind", str(protected), str(protected)]
        for socket_path in masked_sockets:  # connect() then finds no socket: refused
            args += ["--ro-bind", os.devnull, str(socket_path)]
        # bwrap's root is a tmpfs holding the mount points: read-only too, or a write to a parent of
        # the workspace would land there (harmless, gone at exit, but it looks like an escape).
        args += ["--remount-ro", "/", "--chdir", str(cwd), "--", *argv]
        if parent_process:  # not exec'd: the shell stays bwrap's parent ("; exit" stops bash's exec)
            return ["/bin/sh", "-c", '"$@"; exit $?', "sh", *args]
        return args


@functools.cache
def has_controlling_terminal() -> bool:
    """Whether this process has a terminal a command could push keystrokes into (``TIOCSTI``).

    Only then does bwrap get ``--new-session`` (which detaches the command from it): a new session
    costs ~6 ms per command on a busy machine (the kernel's autogroup scheduling), for nothing when
    there is no terminal (CI, servers, tests).
    """
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return False
    os.close(fd)
    return True


@dataclass(frozen=True, slots=True)
class SandboxChoice:
    """What ``select_sandbox`` decided: the sandbox to use (None: guard-only) and a sentence for humans."""

    mode: SandboxMode
    sandbox: BwrapSandbox | None
    description: str


def select_sandbox(mode: SandboxMode | None, *, view: SandboxView | None = None) -> SandboxChoice:
    """Resolve a mode (None: ``$AGCORE_SANDBOX``, else ``"auto"``) to a sandbox or guard-only.

    ``"required"`` without a working sandbox raises ``SandboxUnavailable``; ``"auto"`` without one logs
    a warning once per process and reason.
    """
    if mode is None:
        mode = _mode_from_environment()
    if mode not in SANDBOX_MODES:
        raise ValueError(f"sandbox must be one of {', '.join(SANDBOX_MODES)}, got {mode!r}")
    if mode == "off":
        _warn_once(
            "off",
            "the command sandbox is off (sandbox='off'): commands run with the CommandGuard only, which "
            "reads what a command says and cannot stop what a script or interpreter does",
        )
        return SandboxChoice(mode, None, "guard-only (sandbox off)")
    probe = probe_bwrap()
    if probe.path is None:
        if mode == "required":
            raise SandboxUnavailable(probe.reason)
        _warn_once(
            probe.reason,
            f"no command sandbox: {probe.reason}. Commands run with the CommandGuard only; install "
            "bubblewrap to confine them, or pass sandbox='required' to refuse running without it",
        )
        return SandboxChoice(mode, None, f"guard-only ({probe.reason})")
    return SandboxChoice(
        mode, BwrapSandbox(probe.path, probe.user_namespace, view), f"bubblewrap sandbox ({probe.path})"
    )


def _mode_from_environment() -> SandboxMode:
    value = os.environ.get(ENV_VAR, "").strip().lower() or "auto"
    for mode in SANDBOX_MODES:
        if value == mode:
            return mode
    raise ValueError(f"{ENV_VAR}={value!r}: choose one of {', '.join(SANDBOX_MODES)}")


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        _log.warning(message)
