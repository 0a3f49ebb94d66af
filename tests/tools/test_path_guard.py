"""PathGuard: every path resolves inside the root or is refused with a reason."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agcore.tools._errors import ToolDenied
from agcore.tools._path_guard import PathDenied, PathGuard, glob_match


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace root next to an "outside" directory, with symlinks from one to the other."""
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret")
    (root / "src" / "main.py").write_text("print('hi')\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / "link_out").symlink_to(outside)
    (root / "link_file").symlink_to(outside / "secret.txt")
    (root / "dangling_out").symlink_to(outside / "new.txt")
    (root / "link_up").symlink_to(tmp_path)
    (root / "src" / "link_in").symlink_to(root / "src" / "main.py")
    os.mkfifo(root / "fifo")
    return root, outside


def escape_attempts(root: Path, outside: Path) -> list[str]:
    """Paths that must never resolve: outside the root, device-like, denied or malformed."""
    return [
        "../outside/secret.txt",
        "../../etc/passwd",
        "..",
        "../",
        "/",
        "/etc/passwd",
        str(outside / "secret.txt"),
        str(outside / "new.txt"),
        str(root / ".." / "outside" / "secret.txt"),
        f"{root}/../outside/secret.txt",
        "src/../../outside/secret.txt",
        "./../outside/secret.txt",
        "src/./../../outside",
        "a/b/../../../outside/secret.txt",
        "~/secret.txt",
        "~root/.bashrc",
        "~",
        "link_out/secret.txt",
        "link_out/new.txt",
        "link_out",
        "link_file",
        "dangling_out",
        "link_up/outside/secret.txt",
        "link_out/../outside/secret.txt",
        "..\\outside\\secret.txt",
        "src\\..\\..\\outside",
        "C:\\Windows\\system.ini",
        "%2e%2e/outside/secret.txt",
        "%2e%2e%2foutside%2fsecret.txt",
        "..%2Foutside",
        "\uff0e\uff0e/outside/secret.txt",
        "\u2024\u2024/outside/secret.txt",
        "..\uff0foutside\uff0fsecret.txt",
        "src/main.py\x00.png",
        "",
        "   ",
        "src/\n../../outside",
        "/dev/null",
        "/dev/zero",
        "/dev/sda",
        "/proc/self/environ",
        "fifo",
        ".env",
        ".env.local",
        "config/.env",
        "keys/server.pem",
        "home/id_rsa",
        "home/.ssh/id_rsa.pub",  # a public key alone is not secret (test_secrets_agree), in .ssh it is
    ]


def test_escape_corpus_is_denied_for_reading_and_writing(layout: tuple[Path, Path]) -> None:
    root, outside = layout
    (root / ".env").write_text("KEY=1")
    guard = PathGuard(root)
    attempts = escape_attempts(root, outside)
    assert len(attempts) >= 30
    for attempt in attempts:
        for for_write in (False, True):
            with pytest.raises(PathDenied) as info:
                guard.resolve(attempt, for_write=for_write)
            reason = info.value.reason
            assert len(reason) > 20, attempt
            assert info.value.path == attempt
            assert isinstance(info.value, ToolDenied)


@pytest.mark.parametrize(
    ("attempt", "words"),
    [
        ("../outside/secret.txt", "outside the workspace"),
        ("link_out/secret.txt", "symlink"),
        ("~/x", "'~' is not expanded"),
        ("", "empty"),
        ("a\x00b", "NUL"),
        ("..\\x", "backslash"),
        ("%2e%2e/x", "URL-encoded"),
        ("\uff0e\uff0e/x", "look-alikes"),
        ("fifo", "FIFO"),
        (".env", "pattern '.env'"),
    ],
)
def test_denial_reasons_say_why_and_what_to_do(layout: tuple[Path, Path], attempt: str, words: str) -> None:
    root, _ = layout
    with pytest.raises(PathDenied, match=words):
        PathGuard(root).resolve(attempt)


def test_paths_inside_the_root_resolve_to_real_paths(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    guard = PathGuard(root)
    assert guard.resolve("src/main.py") == root / "src" / "main.py"
    assert guard.resolve("./src/../src/main.py") == root / "src" / "main.py"
    assert guard.resolve(str(root / "src" / "main.py")) == root / "src" / "main.py"  # absolute inside: fine
    assert guard.resolve(".") == root
    assert guard.resolve("new/dir/file.txt", for_write=True) == root / "new" / "dir" / "file.txt"
    # a symlink that stays inside resolves to its target
    assert guard.resolve("src/link_in") == root / "src" / "main.py"
    assert guard.relative(guard.resolve("src/link_in")) == "src/main.py"


def test_git_is_readable_but_not_writable(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    guard = PathGuard(root)
    assert guard.resolve(".git/config") == root / ".git" / "config"
    for path in (".git/config", ".git/hooks/pre-commit", ".git"):
        with pytest.raises(PathDenied, match="writing to"):
            guard.resolve(path, for_write=True)


def test_lookalike_names_that_stay_inside_are_literal(layout: tuple[Path, Path]) -> None:
    """Names with odd characters that do not fold into separators are harmless literals inside."""
    root, _ = layout
    guard = PathGuard(root)
    for name in (
        "café.txt",
        "file:///etc/passwd",
        "$HOME/x",
        "a..b",
        "...",
        "naïve/\uff46\uff49\uff4c\uff45.txt",
    ):
        resolved = guard.resolve(name, for_write=True)
        assert resolved.is_relative_to(root)


def test_a_special_file_inside_the_root_is_denied(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    sock_path = root / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(sock_path))
        with pytest.raises(PathDenied, match="socket"):
            PathGuard(root).resolve("s.sock")


def test_a_symlink_to_a_denied_name_is_denied_both_ways(layout: tuple[Path, Path]) -> None:
    root, _ = layout
    (root / ".env").write_text("KEY=1")
    (root / "innocent.txt").symlink_to(root / ".env")
    (root / "notes.txt").write_text("notes")
    (root / ".env.local").symlink_to(root / "notes.txt")
    guard = PathGuard(root)
    with pytest.raises(PathDenied):
        guard.resolve("innocent.txt")  # the real path is denied
    with pytest.raises(PathDenied):
        guard.resolve(".env.local")  # the name given is denied


def test_custom_deny_lists(tmp_path: Path) -> None:
    guard = PathGuard(tmp_path, deny=["secrets/**", "*.key"], deny_write=["vendor"])
    with pytest.raises(PathDenied):
        guard.resolve("secrets/db.txt")
    with pytest.raises(PathDenied):
        guard.resolve("deep/down/tls.KEY")  # case-insensitive
    assert guard.resolve(".env") == tmp_path / ".env"  # the defaults are replaced
    assert guard.resolve("vendor/lib.py") == tmp_path / "vendor" / "lib.py"
    with pytest.raises(PathDenied):
        guard.resolve("vendor/lib.py", for_write=True)


def test_root_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not an existing directory"):
        PathGuard(tmp_path / "missing")


def test_non_string_paths_are_denied(tmp_path: Path) -> None:
    guard = PathGuard(tmp_path)
    with pytest.raises(PathDenied, match="bytes"):
        guard.resolve(b"x")  # type: ignore[arg-type]
    with pytest.raises(PathDenied, match="string"):
        guard.resolve(5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        (".env", ".env", True),
        (".env", "sub/.env", True),
        (".env", ".envrc", False),
        (".env.*", "a/.env.prod", True),
        ("**/*.pem", "cert.pem", True),
        ("**/*.pem", "a/b/c.PEM", True),
        (".git/**", ".git", True),
        (".git/**", ".git/objects/ab", True),
        (".git/**", "sub/.git/config", False),  # anchored: a "/" in the pattern pins it to the root
        ("build", "build/x/y.o", True),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/pkg/a.py", False),
        ("src/**/*.py", "src/a.py", True),
        ("[ab].txt", "b.txt", True),
    ],
)
def test_glob_match(pattern: str, path: str, expected: bool) -> None:
    assert glob_match(pattern, path) is expected


_COMPONENTS = st.sampled_from(
    [
        "..",
        ".",
        "src",
        "link_out",
        "link_up",
        "link_file",
        "dangling_out",
        "x",
        "\uff0e\uff0e",
        "~",
        "%2e%2e",
        "/",
    ]
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(_COMPONENTS, min_size=1, max_size=6), absolute=st.booleans(), for_write=st.booleans())
def test_property_any_resolved_path_is_inside_the_root(
    layout: tuple[Path, Path], parts: list[str], absolute: bool, for_write: bool
) -> None:
    root, _ = layout
    guard = PathGuard(root)
    path = "/".join(parts)
    if absolute:
        path = str(root) + "/" + path
    try:
        resolved = guard.resolve(path, for_write=for_write)
    except PathDenied as exc:
        reason = exc.reason
        resolved = None
    if resolved is None:
        assert reason
        return
    real = Path(os.path.realpath(resolved))
    assert real == root or real.is_relative_to(root)
