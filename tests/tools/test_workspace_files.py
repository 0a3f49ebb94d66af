"""read_file, write_file, list_dir, glob and the Workspace's tool list, on real files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agcore.llm.types import ToolUseBlock
from agcore.tools import ToolContext, ToolDenied, ToolError, ToolRegistry
from agcore.tools.workspace import TOOL_NAMES, Workspace, workspace_tools


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "main.py").write_text("import os\n\ndef main():\n    return 1\n")
    (root / "src" / "pkg" / "__init__.py").write_text("")
    (root / "README.md").write_text("# demo\n")
    return Workspace(root)


# ------------------------------------------------------------------------------------ read_file


def test_read_numbers_lines_and_reports_the_range(ws: Workspace) -> None:
    out = ws.read_file("src/main.py")
    assert out.splitlines() == [
        "src/main.py: lines 1-4 of 4 (36 bytes)",
        "     1\timport os",
        "     2\t",
        "     3\tdef main():",
        "     4\t    return 1",
    ]
    assert ws.read_file("src/main.py", start_line=3, end_line=3).splitlines()[1:] == ["     3\tdef main():"]
    assert "lines 2-4 of 4" in ws.read_file("src/main.py", start_line=2, end_line=99)


def test_read_range_errors(ws: Workspace) -> None:
    with pytest.raises(ToolError, match=r"past the end of 'src/main\.py', which has 4 lines"):
        ws.read_file("src/main.py", start_line=5)
    with pytest.raises(ToolError, match="numbered from 1"):
        ws.read_file("src/main.py", start_line=0)
    with pytest.raises(ToolError, match="must not be before start_line"):
        ws.read_file("src/main.py", start_line=3, end_line=2)
    with pytest.raises(ToolError, match="does not exist"):
        ws.read_file("src/missing.py")
    with pytest.raises(ToolError, match="is a directory; use list_dir"):
        ws.read_file("src")


def test_read_byte_cap_says_how_to_continue(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, max_read_bytes=100)
    (tmp_path / "big.txt").write_text("".join(f"line {i:03d}\n" for i in range(1, 101)))  # 9 bytes a line
    out = ws.read_file("big.txt")
    lines = out.splitlines()
    assert lines[0] == "big.txt: lines 1-11 of 100 (900 bytes); more: read_file('big.txt', start_line=12)"
    assert lines[-1].startswith("[89 more lines not shown")
    assert "start_line=12" in lines[-1]
    following = ws.read_file("big.txt", start_line=12).splitlines()
    assert following[1] == "    12\tline 012"


def test_read_line_cap(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, max_read_lines=3)
    (tmp_path / "a.txt").write_text("a\nb\nc\nd\ne")  # no final newline: still 5 lines
    out = ws.read_file("a.txt")
    assert out.splitlines()[0].startswith("a.txt: lines 1-3 of 5")
    assert "[2 more lines not shown" in out


def test_read_a_single_huge_line_is_cut(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, max_read_bytes=50)
    (tmp_path / "min.js").write_text("x" * 500)
    out = ws.read_file("min.js")
    assert "     1\t" + "x" * 50 in out
    assert "x" * 51 not in out
    assert "longer than" in out


def test_read_binary_file_gives_size_not_garbage(ws: Workspace) -> None:
    data = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4
    (ws.root / "logo.png").write_bytes(data)
    out = ws.read_file("logo.png")
    assert out == f"'logo.png' is a binary file ({len(data):,} bytes); read_file shows text files only."


def test_read_non_utf8_text_is_shown_with_a_note(ws: Workspace) -> None:
    (ws.root / "latin.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    out = ws.read_file("latin.txt")
    assert "caf\ufffd cr\ufffdme" in out
    assert "not valid UTF-8" in out


def test_read_empty_file_and_crlf(ws: Workspace) -> None:
    (ws.root / "empty.txt").write_bytes(b"")
    assert ws.read_file("empty.txt") == "'empty.txt' is empty (0 bytes)."
    (ws.root / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    assert ws.read_file("dos.txt").splitlines()[1:] == ["     1\tone", "     2\ttwo"]


# ----------------------------------------------------------------------------------- write_file


def test_write_creates_parents_and_reports(ws: Workspace) -> None:
    out = ws.write_file("docs/guide/intro.md", "# Intro\nnaïve 😀\n")
    assert out == "Created 'docs/guide/intro.md' (20 bytes).\nundo_patch() takes it back."
    assert (ws.root / "docs" / "guide" / "intro.md").read_bytes() == "# Intro\nnaïve 😀\n".encode()
    out = ws.write_file("docs/guide/intro.md", "short")
    assert out == "Overwrote 'docs/guide/intro.md' (5 bytes; it had 20 bytes).\nundo_patch() takes it back."
    assert (ws.root / "docs" / "guide" / "intro.md").read_text() == "short"


def test_write_is_atomic_and_keeps_permissions(ws: Workspace) -> None:
    target = ws.root / "run.sh"
    target.write_text("old")
    target.chmod(0o750)
    inode = target.stat().st_ino
    ws.read_file("run.sh")
    ws.write_file("run.sh", "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert target.stat().st_ino != inode  # replaced, not rewritten in place
    assert sorted(p.name for p in ws.root.iterdir()) == ["README.md", "run.sh", "src"]  # no temp files


def test_a_failed_write_leaves_the_old_content(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_replace(src: str, dst: str, **dir_fds: int) -> None:
        raise OSError(28, "No space left on device")

    ws.read_file("README.md")
    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space"):
        ws.write_file("README.md", "new content")
    assert (ws.root / "README.md").read_text() == "# demo\n"
    assert sorted(p.name for p in ws.root.iterdir()) == ["README.md", "src"]


def test_write_failures(ws: Workspace) -> None:
    with pytest.raises(ToolError, match="is a directory"):
        ws.write_file("src", "x")
    with pytest.raises(ToolError, match=r"'README\.md' is a file"):
        ws.write_file("README.md/inner.txt", "x")
    (ws.root / ".git").mkdir()
    with pytest.raises(ToolDenied, match="writing to"):
        ws.write_file(".git/config", "x")
    assert not (ws.root / ".git" / "config").exists()


# ------------------------------------------------------------------------------------- list_dir


def test_list_dir_tree_with_depth(ws: Workspace) -> None:
    assert ws.list_dir().splitlines() == ["./ (workspace root)", "  src/", "  README.md  (7 bytes)"]
    assert ws.list_dir(".", depth=3).splitlines() == [
        "./ (workspace root)",
        "  src/",
        "    pkg/",
        "      __init__.py  (0 bytes)",
        "    main.py  (36 bytes)",
        "  README.md  (7 bytes)",
    ]
    assert ws.list_dir("src/pkg").splitlines() == ["src/pkg/", "  __init__.py  (0 bytes)"]


def test_list_dir_skips_vcs_and_cache_dirs_and_hides_denied_files(ws: Workspace, tmp_path: Path) -> None:
    for name in (".git/objects", "node_modules/left-pad", "src/__pycache__"):
        (ws.root / name).mkdir(parents=True)
    (ws.root / "node_modules" / "left-pad" / "index.js").write_text("")
    (ws.root / ".env").write_text("KEY=1")
    (ws.root / "outside_link").symlink_to(tmp_path)
    out = ws.list_dir(depth=3)
    assert ".git/  (not expanded" in out
    assert "node_modules/  (not expanded" in out
    assert "__pycache__/  (not expanded" in out
    assert "left-pad" not in out
    assert "objects" not in out
    assert ".env" not in out
    assert f"outside_link -> {tmp_path}  (outside the workspace)" in out
    assert "left-pad/" in ws.list_dir("node_modules")  # named explicitly: listed


def test_list_dir_entry_cap_and_errors(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, max_list_entries=5)
    for i in range(12):
        (tmp_path / f"f{i:02d}.txt").write_text("")
    out = ws.list_dir()
    assert out.count(".txt") == 5
    assert "[... 7 more entries not shown (cap: 5)" in out
    with pytest.raises(ToolError, match="is a file"):
        ws.list_dir("f00.txt")
    with pytest.raises(ToolError, match="depth must be 1 or more"):
        ws.list_dir(".", depth=0)
    with pytest.raises(ToolError, match="does not exist"):
        ws.list_dir("nope")
    (tmp_path / "empty").mkdir()
    assert ws.list_dir("empty") == "empty/\n  (empty)"


# ------------------------------------------------------------------------------------------ glob


def test_glob_matches_sorted_and_relative(ws: Workspace) -> None:
    (ws.root / "src" / "pkg" / "util.py").write_text("")
    assert ws.glob("**/*.py").splitlines() == ["src/main.py", "src/pkg/__init__.py", "src/pkg/util.py"]
    assert ws.glob("src/*.py") == "src/main.py"
    assert ws.glob("./src/*") == "src/main.py\nsrc/pkg/"
    assert ws.glob("*.md") == "README.md"
    assert ws.glob("*.rs") == "No paths match '*.rs'."


def test_glob_never_leaves_the_root(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "outside.py").write_text("")
    (ws.root / "link_out").symlink_to(tmp_path)
    (ws.root / "file_out.py").symlink_to(tmp_path / "outside.py")
    for pattern in ("../*.py", "/etc/*", "~/*", "src/../../*", "..\\*"):
        with pytest.raises(ToolError, match="outside the workspace"):
            ws.glob(pattern)
    everything = ws.glob("**/*")
    assert "outside.py" not in everything  # symlinked directories are not followed
    assert "file_out.py" not in everything  # a symlinked file pointing outside is left out
    assert "link_out/" not in everything


def test_glob_cap_skip_dirs_and_denied(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, max_glob_results=3)
    for i in range(5):
        (tmp_path / f"m{i}.py").write_text("")
    (tmp_path / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "node_modules" / "x" / "i.py").write_text("")
    (tmp_path / "cert.pem").write_text("")
    out = ws.glob("**/*.py")
    assert out.splitlines()[:3] == ["m0.py", "m1.py", "m2.py"]
    assert "[... 2 more matches not shown (cap: 3)" in out
    assert ws.glob("node_modules/**/*.py") == "node_modules/x/i.py"
    assert ws.glob("*.pem") == "No paths match '*.pem'."
    with pytest.raises(ToolError, match="empty"):
        ws.glob("  ")


# ------------------------------------------------------------------------------------ the tools


def test_tools_have_schemas_and_confirmation_flags(ws: Workspace) -> None:
    tools = {t.name: t for t in ws.tools()}
    assert tuple(tools) == TOOL_NAMES
    confirmed = {name for name, t in tools.items() if t.requires_confirmation}
    assert confirmed == {"write_file", "edit_file", "apply_patch", "undo_patch", "run_command"}
    assert tools["read_file"].input_schema["required"] == ["path"]
    assert "start_line" in tools["read_file"].input_schema["properties"]
    assert tools["grep"].description.startswith("Search file contents")
    relaxed = Workspace(ws.root, confirm_writes=False, confirm_commands=False).tools()
    assert not any(t.requires_confirmation for t in relaxed)
    assert [t.name for t in ws.tools(include=["read_file", "grep"])] == ["read_file", "grep"]
    with pytest.raises(ValueError, match="unknown workspace tool"):
        ws.tools(include=["delete_everything"])
    assert [t.name for t in workspace_tools(ws.root)] == list(TOOL_NAMES)


def test_workspace_configuration_errors(tmp_path: Path) -> None:
    from agcore.tools import PathGuard

    (tmp_path / "a").mkdir()
    with pytest.raises(ValueError, match="not the workspace root"):
        Workspace(tmp_path, path_guard=PathGuard(tmp_path / "a"))
    with pytest.raises(ValueError, match="command_timeout"):
        Workspace(tmp_path, command_timeout=0)
    with pytest.raises(ValueError, match="not an existing directory"):
        Workspace(tmp_path / "missing")


@pytest.mark.anyio
async def test_registry_reports_tool_failures_as_error_results(ws: Workspace) -> None:
    registry = ToolRegistry(ws.tools())
    ctx = ToolContext(session_id="s")

    async def call(name: str, **arguments: object) -> tuple[bool, str]:
        result = await registry.execute(ToolUseBlock(id="c1", name=name, input=arguments), ctx)
        assert isinstance(result.content, str)
        return result.is_error, result.content

    assert await call("read_file", path="README.md") == (
        False,
        "README.md: lines 1-1 of 1 (7 bytes)\n     1\t# demo",
    )
    is_error, text = await call("read_file", path="../../etc/passwd")
    assert is_error
    assert "outside the workspace" in text
    is_error, text = await call("read_file", path="nope.txt")
    assert is_error
    assert "does not exist" in text
    is_error, text = await call("write_file", path="notes/a.txt", content="hello")
    assert (is_error, text) == (False, "Created 'notes/a.txt' (5 bytes).\nundo_patch() takes it back.")
    is_error, text = await call("list_dir", path=".", depth="lots")
    assert is_error
    assert "depth" in text


@pytest.mark.anyio
async def test_a_write_of_run_commands_report_is_refused_saying_what_was_printed(tmp_path: Path) -> None:
    ws = Workspace(tmp_path, confirm_commands=False)
    (tmp_path / "generate.py").write_text("print('5fcf87609c8d')\nprint('done')\n")
    report = await ws.run_command("python3 generate.py")
    assert report.startswith("$ python3 generate.py\nexit code: 0\nstdout:\n")
    with pytest.raises(ToolError, match=r"run_command.s report of `python3 generate\.py`") as error:
        ws.write_file("output.txt", report)
    assert "here '5fcf87609c8d\\ndone'; write only that" in str(error.value)
    assert not (tmp_path / "output.txt").exists()
    assert ws.write_file("output.txt", "5fcf87609c8d\ndone\n").startswith("Created 'output.txt'")


def test_text_that_only_mentions_a_command_is_written(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    notes = "$ make test\nruns the tests; exit code: 0 means they passed\n"
    assert ws.write_file("notes.md", notes).startswith("Created 'notes.md'")
    assert (tmp_path / "notes.md").read_text() == notes


@pytest.mark.parametrize("content", ["<list_dir_output>", "{result}", "{{ output }}", "${OUT}\n", " <out> "])
def test_a_write_of_only_a_placeholder_is_refused_saying_what_to_do(ws: Workspace, content: str) -> None:
    with pytest.raises(ToolError, match="is a placeholder") as error:
        ws.write_file("files.txt", content)
    assert "Write the actual text" in str(error.value)
    assert not (ws.root / "files.txt").exists()


def test_a_placeholder_naming_a_listing_shows_its_last_result(ws: Workspace) -> None:
    (ws.root / "listed").mkdir()
    (ws.root / "listed" / "alpha.py").write_text("A = 1\n")
    ws.list_dir("listed")
    with pytest.raises(ToolError) as error:
        ws.write_file("files.txt", "<list_dir_output>")
    message = str(error.value)
    assert "list_dir's last result, which the placeholder names, was:\nlisted/\n  alpha.py" in message
    with pytest.raises(ToolError) as error:
        ws.write_file("files.txt", "{result}")  # names no tool: no listing shown
    assert "last result" not in str(error.value)
    assert not (ws.root / "files.txt").exists()


@pytest.mark.parametrize("content", ["alpha.py\nbeta.py\n", "{}\n", "<b>bold</b>", "Hello, <name>!", "<br/>"])
def test_text_with_brackets_that_is_not_only_a_slot_is_written(ws: Workspace, content: str) -> None:
    assert ws.write_file("out.txt", content).startswith("Created 'out.txt'")
    assert (ws.root / "out.txt").read_text() == content


def test_a_whole_file_write_that_drops_a_function_is_refused(ws: Workspace) -> None:
    before = "def add(a, b):\n    return a + b\n\n\nclass Box:\n    pass\n"
    (ws.root / "mathutils.py").write_text(before)
    ws.read_file("mathutils.py")
    only_new = "def multiply(a, b):\n    return a * b\n"
    with pytest.raises(ToolError, match=r"would remove add, Box, which 'mathutils.py' defines") as error:
        ws.write_file("mathutils.py", only_new)
    assert "To add to the file, use edit_file" in str(error.value)
    assert (ws.root / "mathutils.py").read_text() == before
    kept = before + "\n\n" + only_new
    assert ws.write_file("mathutils.py", kept).startswith("Overwrote 'mathutils.py'")
    assert (ws.root / "mathutils.py").read_text() == kept
    ws.edit_file("mathutils.py", "class Box:\n    pass\n", "")  # removing one on purpose: edit_file
    assert "class Box" not in (ws.root / "mathutils.py").read_text()


def test_a_refused_addition_sent_again_is_appended_saying_so(ws: Workspace) -> None:
    before = 'def add(a, b):\n    """The sum."""\n    return a + b\n'
    (ws.root / "mathutils.py").write_text(before)
    ws.read_file("mathutils.py")
    only_new = "def multiply(a, b):\n    return a * b\n"
    with pytest.raises(ToolError, match="would remove add"):
        ws.write_file("mathutils.py", only_new)
    result = ws.write_file("mathutils.py", only_new)  # the same write, sent again: the offered append
    assert result.startswith("Note: this write would have removed what the file defines, and you sent it")
    assert (ws.root / "mathutils.py").read_text() == before + "\n\n" + only_new
    ws.undo_patch()
    assert (ws.root / "mathutils.py").read_text() == before


def test_a_refused_rewrite_sent_again_is_refused_again(ws: Workspace) -> None:
    before = "def add(a, b):\n    return a + b\n\n\nclass Box:\n    pass\n"
    (ws.root / "mathutils.py").write_text(before)
    ws.read_file("mathutils.py")
    for _ in range(3):  # it keeps a name the file has: a rewrite, never turned into an append
        with pytest.raises(ToolError, match="would remove Box"):
            ws.write_file("mathutils.py", "def add(a, b):\n    return b + a\n")
    assert (ws.root / "mathutils.py").read_text() == before


def test_a_refused_addition_sent_again_after_the_file_changed_is_refused(ws: Workspace) -> None:
    (ws.root / "mathutils.py").write_text("def add(a, b):\n    return a + b\n")
    ws.read_file("mathutils.py")
    only_new = "def multiply(a, b):\n    return a * b\n"
    with pytest.raises(ToolError):
        ws.write_file("mathutils.py", only_new)
    ws.edit_file("mathutils.py", "return a + b", "return b + a")
    with pytest.raises(ToolError, match="would remove add"):  # another file now: refused afresh
        ws.write_file("mathutils.py", only_new)


def test_a_dropping_write_of_new_names_only_is_answered_with_the_append_edit(ws: Workspace) -> None:
    before = 'def add(a, b):\n    """The sum."""\n    return a + b\n'
    (ws.root / "mathutils.py").write_text(before)
    ws.read_file("mathutils.py")
    with pytest.raises(ToolError) as error:
        ws.write_file("mathutils.py", "def multiply(a, b):\n    return a * b\n")
    suggested = ('To add the new content at the end, send: edit_file(path="mathutils.py", '
                 'old="    return a + b", '
                 'new="    return a + b\\n\\n\\ndef multiply(a, b):\\n    return a * b")')
    assert str(error.value).endswith(suggested)
    appended = "    return a + b\n\n\ndef multiply(a, b):\n    return a * b"
    ws.edit_file("mathutils.py", "    return a + b", appended)
    assert (ws.root / "mathutils.py").read_text() == before + "\n\ndef multiply(a, b):\n    return a * b\n"
    with pytest.raises(ToolError) as error:  # keeps a name the file has: a rewrite, no append offered
        ws.write_file("mathutils.py", "def add(a, b):\n    return b + a\n")
    assert "To add the new content at the end" not in str(error.value)


def test_writing_the_content_a_file_holds_changes_nothing_and_says_so(ws: Workspace) -> None:
    (ws.root / "greet.py").write_text("def greet(name):\n    return 'Hello, ' + name\n")
    ws.read_file("greet.py")
    before = (ws.root / "greet.py").stat().st_mtime_ns
    result = ws.write_file("greet.py", "def greet(name):\n    return 'Hello, ' + name\n")
    assert result.startswith("'greet.py' already holds exactly this content")
    assert "nothing was changed" in result
    assert (ws.root / "greet.py").stat().st_mtime_ns == before  # not rewritten: checks see no change
    with pytest.raises(ToolError):  # nothing went on the undo stack
        ws.undo_patch()
