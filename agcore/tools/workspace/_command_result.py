"""How a command ran in the workspace (``CommandResult``), as data and as the text the model reads."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["CommandResult"]


@dataclass(slots=True)
class CommandResult:
    """How a command ran (``Workspace.execute``): ``exit_code`` None when it ran past its time limit
    and was killed; ``stdout``/``stderr`` capped (head and tail kept); ``cwd`` root-relative, after
    any ``cd``; ``undone_traps`` the git metadata it planted that was undone; ``read_stdin`` whether
    a command read the text given as its standard input (an acceptance check that read the answer)."""

    exit_code: int | None  # None: timed out
    stdout: str
    stderr: str
    cwd: str  # root-relative, after any "cd"
    timed_out: bool = False
    command: str = ""  # as the user or the model wrote it
    cwd_shown: str = ""  # where it was asked to run, when not the root
    time_limit: float = 0.0
    sandboxed: bool = False
    undone_traps: list[str] = field(default_factory=list)
    read_stdin: bool = False

    @property
    def passed(self) -> bool:
        """Whether the command ran to its end with exit status 0."""
        return self.exit_code == 0

    @property
    def status(self) -> str:
        """``exit 0``, ``exit 1`` or ``timed out after 30s``."""
        return f"timed out after {self.time_limit:g}s" if self.timed_out else f"exit {self.exit_code}"

    def output_tail(self, limit: int) -> str:
        """stdout then stderr, the last ``limit`` characters of them (a test run's verdict is at its
        end), said to be cut when it is."""
        text = "\n".join(part.rstrip("\n") for part in (self.stdout, self.stderr) if part.strip())
        if len(text) <= limit:
            return text
        return f"[... {len(text) - limit:,} characters cut; the end follows ...]\n{text[-limit:]}"

    def report(self) -> str:
        """The result as ``run_command`` gives it to the model: the command, its exit status or
        timeout, stdout, stderr, and any git metadata undone."""
        where = f" (in {self.cwd_shown})" if self.cwd_shown else ""
        if self.timed_out:
            killed = (
                "the command and every process it started were killed"
                if self.sandboxed
                else "its process group and every process carrying its tag were killed (guard-only mode)"
            )
            status = f"timed out after {self.time_limit:g}s; {killed}. Output so far:"
        else:
            status = f"exit code: {self.exit_code}"
        parts = [f"$ {self.command}{where}", status]
        parts.append("stdout:\n" + self.stdout.rstrip("\n") if self.stdout else "stdout: (empty)")
        parts.append("stderr:\n" + self.stderr.rstrip("\n") if self.stderr else "stderr: (empty)")
        if self.undone_traps:
            parts.append(
                "refused: the command planted git metadata that the user's own git would run outside the "
                "sandbox, and it was undone:\n" + "\n".join(f"  - {note}" for note in self.undone_traps)
                + "\nChange the repository with git commands (git add, git commit), not by writing into .git."
            )
        return "\n".join(parts)
