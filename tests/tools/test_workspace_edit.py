"""``edit_file(path, old, new)``: one exact replacement, refused (nothing written, a message that says
how many matches there were and what to send) when ``old`` is not there exactly once; on the shared
undo stack; behind the path guard and the read-before-write rule."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from agcore.llm import ToolUseBlock
from agcore.tools import ToolContext, ToolError, ToolRegistry
from agcore.tools.workspace import Workspace

SOURCE = (
    'def get_user(user_id):\n    """The user record."""\n    return USERS[user_id]\n\n\n'
    "def main():\n    return 0\n"
)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    (tmp_path / "users.py").write_text(SOURCE)
    workspace = Workspace(tmp_path)
    workspace.read_file("users.py")
    return workspace


def test_one_exact_match_is_replaced_and_the_result_shown(ws: Workspace) -> None:
    out = ws.edit_file("users.py", "    return USERS[user_id]\n", "    return USERS.get(user_id)\n")
    assert out == (
        "Edited 'users.py': the text now reads, from line 3:\n"
        "     3\t    return USERS.get(user_id)\n"
        "undo_patch() takes it back."
    )
    assert (ws.root / "users.py").read_text() == SOURCE.replace("USERS[user_id]", "USERS.get(user_id)")


def test_permissions_are_kept_and_undo_takes_the_edit_back(ws: Workspace) -> None:
    target = ws.root / "users.py"
    target.chmod(0o640)
    ws.edit_file("users.py", "return 0", "return 1")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert ws.undo_patch().splitlines() == ["Undid the last change:", "  restored users.py"]
    assert target.read_text() == SOURCE


def test_edits_writes_and_patches_share_one_undo_stack(ws: Workspace) -> None:
    ws.edit_file("users.py", "return 0", "return 1")
    ws.apply_patch("--- a/users.py\n+++ b/users.py\n@@ -7 +7 @@\n-    return 1\n+    return 2\n")
    ws.edit_file("users.py", "return 2", "return 3")
    seen = []
    for _ in range(3):
        ws.undo_patch()
        seen.append((ws.root / "users.py").read_text().splitlines()[-1])
    assert seen == ["    return 2", "    return 1", "    return 0"]


def test_no_match_changes_nothing_and_says_how_to_find_the_text(ws: Workspace) -> None:
    with pytest.raises(ToolError) as refused:
        ws.edit_file("users.py", "class Unrelated: pass", "return 1")
    message = str(refused.value)
    assert message.startswith("old was not found in 'users.py', so nothing was changed.")
    assert "read_file('users.py')" in message
    assert (ws.root / "users.py").read_text() == SOURCE


def test_several_matches_say_how_many_and_where(ws: Workspace) -> None:
    with pytest.raises(ToolError) as refused:
        ws.edit_file("users.py", "return", "yield")
    assert str(refused.value).startswith(
        "old occurs 2 times in 'users.py' (starting at lines 3, 7), not once, so nothing was changed."
    )
    assert "more of the surrounding lines" in str(refused.value)
    assert (ws.root / "users.py").read_text() == SOURCE


def test_wrong_indentation_is_pointed_at(ws: Workspace) -> None:
    with pytest.raises(ToolError) as refused:
        ws.edit_file("users.py", "def main():\n  return 0\n", "def main():\n  return 1\n")
    message = str(refused.value)
    assert "different indentation or spacing, from line 6" in message
    assert "     7\t    return 0" in message


def test_line_numbers_copied_from_read_file_are_named(ws: Workspace) -> None:
    with pytest.raises(ToolError, match="read_file's line numbers"):
        ws.edit_file("users.py", "     7\t    return 0", "     7\t    return 1")


def test_windows_line_endings_match_plain_newlines(ws: Workspace) -> None:
    (ws.root / "dos.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    ws.read_file("dos.txt")
    ws.edit_file("dos.txt", "one\ntwo\n", "one\n2\n")
    assert (ws.root / "dos.txt").read_bytes() == b"one\r\n2\r\nthree\r\n"


def test_edit_needs_a_read_of_the_current_version(tmp_path: Path) -> None:
    (tmp_path / "users.py").write_text(SOURCE)
    ws = Workspace(tmp_path)
    with pytest.raises(ToolError, match=r"has not been read in this session, so it was not edited"):
        ws.edit_file("users.py", "return 0", "return 1")
    ws.read_file("users.py", start_line=6, end_line=7)
    ws.edit_file("users.py", "return 0", "return 1")
    ws.edit_file("users.py", "return 1", "return 2")  # its own edit is a version it knows
    (tmp_path / "users.py").write_text(SOURCE)  # changed behind its back
    with pytest.raises(ToolError, match="has changed on disk"):
        ws.edit_file("users.py", "return 0", "return 1")


def test_bad_requests_are_refused_with_what_to_do(ws: Workspace) -> None:
    with pytest.raises(ToolError, match=r"does not exist.*use write_file to create it"):
        ws.edit_file("missing.py", "a", "b")
    with pytest.raises(ToolError, match="old is empty"):
        ws.edit_file("users.py", "", "x")
    with pytest.raises(ToolError, match="the same text"):
        ws.edit_file("users.py", "main", "main")
    (ws.root / "pkg").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        ws.edit_file("pkg", "a", "b")
    (ws.root / "latin.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(ToolError, match="not UTF-8"):
        ws.edit_file("latin.txt", "caf", "cafe")


def test_the_path_guard_applies(ws: Workspace) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        ws.edit_file("../outside.py", "a", "b")
    (ws.root / ".env").write_text("TOKEN=1\n")
    with pytest.raises(ToolError):
        ws.edit_file(".env", "TOKEN=1", "TOKEN=2")
    assert (ws.root / ".env").read_text() == "TOKEN=1\n"


def test_deleting_text_with_an_empty_new(ws: Workspace) -> None:
    out = ws.edit_file("users.py", '    """The user record."""\n', "")
    assert out.startswith("Edited 'users.py': removed 1 line(s) of text at line 2.")
    assert '"""' not in (ws.root / "users.py").read_text()


@pytest.mark.anyio
async def test_offered_by_default_and_confirmed_like_the_other_writers(ws: Workspace) -> None:
    tools = {t.name: t for t in ws.tools()}
    assert tools["edit_file"].requires_confirmation
    assert tools["edit_file"].input_schema["required"] == ["path", "old", "new"]
    registry = ToolRegistry(ws.tools())
    call = ToolUseBlock(id="c1", name="edit_file", input={"path": "users.py", "old": "nope", "new": "x"})
    result = await registry.execute(call, ToolContext(session_id="s"))
    assert result.is_error
    assert "old was not found" in str(result.content)


def test_a_replaced_name_still_in_the_file_is_named_with_its_lines(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("from users import get_usr\n\n\ndef show(user_id):\n"
                                     "    return get_usr(user_id)\n")
    ws = Workspace(tmp_path)
    ws.read_file("app.py")
    out = ws.edit_file("app.py", "get_usr(user_id)", "get_user(user_id)")
    assert "Note: 'get_usr' (line 1), which this edit replaced, still appears in 'app.py'" in out
    assert "renaming it, change it there too" in out
    again = ws.edit_file("app.py", "import get_usr", "import get_user")
    assert "Note:" not in again  # the last one: nothing left behind


def test_a_name_the_edit_only_moves_is_not_named(ws: Workspace) -> None:
    out = ws.edit_file("users.py", "def main():\n    return 0\n", "def main():\n    return len(USERS)\n")
    assert "Note:" not in out


# ------------------------------------------------------------------ a miss shows what to copy

CONFIG = "[server]\nhost = 127.0.0.1\nport = 8080\nworkers = 2\n\n[logging]\nlevel = info\n"


@pytest.fixture
def config(tmp_path: Path) -> Workspace:
    (tmp_path / "config.ini").write_text(CONFIG)
    workspace = Workspace(tmp_path)
    workspace.read_file("config.ini")
    return workspace


def test_a_miss_shows_the_closest_line_numbered_to_copy(config: Workspace) -> None:
    with pytest.raises(ToolError) as refused:
        config.edit_file("config.ini", "server port = 8080", "server port = 9090")
    message = str(refused.value)
    assert message.startswith("old was not found in 'config.ini', so nothing was changed.")
    assert "closest to old is at line 3" in message
    assert "     3\tport = 8080" in message
    assert "read_file('config.ini')" not in message  # the text is shown: no reading needed
    assert message.endswith('The same change made there would be: old="port = 8080", new="port = 9090".')
    assert (config.root / "config.ini").read_text() == CONFIG
    # copied as shown, the edit goes through
    config.edit_file("config.ini", "port = 8080", "port = 9090")
    assert "port = 9090" in (config.root / "config.ini").read_text()


def test_a_multi_line_miss_shows_the_closest_window(ws: Workspace) -> None:
    with pytest.raises(ToolError) as refused:
        ws.edit_file("users.py", "def main():\n    return None\n", "def main():\n    return 1\n")
    message = str(refused.value)
    assert "closest to old is at lines 6-7" in message
    assert "     6\tdef main():\n     7\t    return 0" in message


def test_nothing_close_falls_back_to_reading_the_file(config: Workspace) -> None:
    with pytest.raises(ToolError) as refused:
        config.edit_file("config.ini", "completely unrelated text", "x")
    assert "read_file('config.ini')" in str(refused.value)
    assert "closest" not in str(refused.value)


def test_an_edit_made_already_says_so_instead_of_asking_for_old(ws: Workspace) -> None:
    ws.edit_file("users.py", "def get_user(", "def fetch_user(")
    with pytest.raises(ToolError) as refused:
        ws.edit_file("users.py", "def get_user(", "def fetch_user(")
    message = str(refused.value)
    assert "new is already in 'users.py' at line 1: this edit was made before. Nothing is left" in message


def test_an_empty_file_is_named_as_empty(tmp_path: Path) -> None:
    (tmp_path / "files.txt").write_text("\n")
    workspace = Workspace(tmp_path)
    workspace.read_file("files.txt")
    with pytest.raises(ToolError) as refused:
        workspace.edit_file("files.txt", "alpha.py\nbeta.py", "alpha.py\nbeta.py\n")
    assert "'files.txt' is empty" in str(refused.value)
    assert "use write_file" in str(refused.value)


def test_the_same_miss_sent_again_says_it_cannot_work(config: Workspace) -> None:
    for _ in range(2):
        with pytest.raises(ToolError) as refused:
            config.edit_file("config.ini", "[server]\nport = 8081", "[server]\nport = 1")  # nothing sure
    again = str(refused.value)
    assert again.startswith("You sent this same old text before and it was not found then either")
    assert "closest to old" in again  # the same pointer as the first time
    assert (config.root / "config.ini").read_text() == CONFIG


def test_the_same_miss_sent_again_makes_the_change_the_miss_offered(config: Workspace) -> None:
    with pytest.raises(ToolError, match='old="port = 8080", new="port = 9090"'):
        config.edit_file("config.ini", "server port = 8080", "server port = 9090")
    done = config.edit_file("config.ini", "server port = 8080", "server port = 9090")  # insisted
    assert done.startswith("Note: old was not in the file, again; the same change was made")
    assert "     3\tport = 9090" in done
    assert (config.root / "config.ini").read_text() == CONFIG.replace("port = 8080", "port = 9090")


def test_an_offered_change_whose_text_is_in_the_file_twice_is_never_made(tmp_path: Path) -> None:
    (tmp_path / "two.ini").write_text("[a]\nport = 8080\n[b]\nport = 8080\n")
    workspace = Workspace(tmp_path)
    workspace.read_file("two.ini")
    for _ in range(3):
        with pytest.raises(ToolError):
            workspace.edit_file("two.ini", "server port = 8080", "server port = 9090")
    assert (tmp_path / "two.ini").read_text() == "[a]\nport = 8080\n[b]\nport = 8080\n"


def test_a_miss_after_the_file_changed_is_not_called_a_repeat(config: Workspace) -> None:
    with pytest.raises(ToolError):
        config.edit_file("config.ini", "server port = 8080", "server port = 9090")
    config.edit_file("config.ini", "workers = 2", "workers = 3")
    with pytest.raises(ToolError) as refused:
        config.edit_file("config.ini", "server port = 8080", "server port = 9090")
    assert not str(refused.value).startswith("You sent this same old text before")


def test_an_edit_made_already_shows_where_the_replaced_name_is_left(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(
        'from users import get_usr\n\n\ndef greeting(user_id):\n    return "Hi " + get_usr(user_id)["name"]\n'
    )
    workspace = Workspace(tmp_path)
    workspace.read_file("app.py")
    done = workspace.edit_file("app.py", "get_usr(user_id)", "get_user(user_id)")
    assert "still appears in 'app.py'; if you are renaming it, change it there too:\n" \
           "     1\tfrom users import get_usr\n" in done
    with pytest.raises(ToolError) as refused:
        workspace.edit_file("app.py", "get_usr(user_id)", "get_user(user_id)")  # replayed
    message = str(refused.value)
    assert "new is already in 'app.py' at line 5: this edit was made before." in message
    assert "But 'get_usr', which it replaced, is still in 'app.py' here:\n     1\tfrom users import get_usr" \
           in message


# ------------------------------------------- old not word for word: its changed lines, once

CALC = (
    'def average(numbers):\n    """The arithmetic mean."""\n'
    "    return sum(numbers) / (len(numbers) + 1)\n\n\n"
    "def total(numbers):\n    return sum(numbers)\n"
)


@pytest.fixture
def calc(tmp_path: Path) -> Workspace:
    (tmp_path / "calc.py").write_text(CALC)
    workspace = Workspace(tmp_path)
    workspace.read_file("calc.py")
    return workspace


def test_the_one_changed_line_is_changed_where_it_is_indented_as_the_file(calc: Workspace) -> None:
    # a 1.5B model's edit: the docstring left out, one-space indentation
    out = calc.edit_file(
        "calc.py",
        "def average(numbers):\n return sum(numbers) / (len(numbers) + 1)",
        "def average(numbers):\n return sum(numbers) / len(numbers)",
    )
    assert out.startswith("Note: old was not in the file exactly as sent")
    assert "     3\t    return sum(numbers) / len(numbers)" in out
    assert (calc.root / "calc.py").read_text() == CALC.replace("(len(numbers) + 1)", "len(numbers)")
    calc.undo_patch()
    assert (calc.root / "calc.py").read_text() == CALC


def test_a_changed_line_found_twice_is_refused(calc: Workspace) -> None:
    with pytest.raises(ToolError, match="old was not found"):
        calc.edit_file("calc.py", "def x():\n return sum(numbers)", "def x():\n return 0")
    with pytest.raises(ToolError, match="old was not found"):  # context the file does not have
        calc.edit_file("calc.py", "def mean(xs):\n return sum(numbers) / (len(numbers) + 1)",
                       "def mean(xs):\n return 0")
    assert (calc.root / "calc.py").read_text() == CALC


def test_changes_in_two_places_of_old_are_not_guessed(calc: Workspace) -> None:
    with pytest.raises(ToolError, match="old was not found"):
        calc.edit_file(
            "calc.py",
            "def average(numbers):\n  return sum(numbers) / (len(numbers) + 1)\ndef total(numbers):",
            "def mean(numbers):\n  return sum(numbers) / len(numbers)\ndef total(numbers):",
        )
    assert (calc.root / "calc.py").read_text() == CALC


def test_no_change_is_suggested_when_the_closest_text_lacks_what_old_changes(config: Workspace) -> None:
    with pytest.raises(ToolError) as refused:
        config.edit_file("config.ini", "port = 8081", "port = 9090")  # the closest line says 8080
    assert "closest to old is at line 3" in str(refused.value)
    assert "The same change made there" not in str(refused.value)


def test_a_rename_edit_replayed_twice_is_carried_to_the_rest_of_the_file(tmp_path: Path) -> None:
    app = ('from users import get_usr\n\n\ndef greeting(user_id):\n'
           '    return "Hi " + get_usr(user_id)["name"]\n')
    (tmp_path / "app.py").write_text(app)
    workspace = Workspace(tmp_path)
    workspace.read_file("app.py")
    workspace.edit_file("app.py", "get_usr(user_id)", "get_user(user_id)")
    with pytest.raises(ToolError, match="this edit was made before"):  # replayed: told, with the line
        workspace.edit_file("app.py", "get_usr(user_id)", "get_user(user_id)")
    done = workspace.edit_file("app.py", "get_usr(user_id)", "get_user(user_id)")  # replayed again
    assert done.startswith("Note: this edit was made before, and you sent it again")
    assert "     1\tfrom users import get_user" in done
    assert (tmp_path / "app.py").read_text() == app.replace("get_usr", "get_user")
    workspace.undo_patch()
    assert "from users import get_usr\n" in (tmp_path / "app.py").read_text()


def test_a_replayed_edit_that_is_no_rename_is_not_carried(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("value = 1\nother = value\n")
    workspace = Workspace(tmp_path)
    workspace.read_file("m.py")
    workspace.edit_file("m.py", "value = 1", "value = 22")  # swaps no name for another
    for _ in range(2):
        with pytest.raises(ToolError):
            workspace.edit_file("m.py", "value = 1", "value = 22")
    assert (tmp_path / "m.py").read_text() == "value = 22\nother = value\n"


def test_a_miss_that_shows_the_files_lines_counts_as_seeing_them(tmp_path: Path) -> None:
    (tmp_path / "config.ini").write_text(CONFIG)
    workspace = Workspace(tmp_path)  # never read_file'd: the model grepped
    with pytest.raises(ToolError, match="closest to old is at line 3"):
        workspace.edit_file("config.ini", "server port = 8080", "server port = 9090")
    workspace.edit_file("config.ini", "port = 8080", "port = 9090")  # copied from the lines shown
    assert "port = 9090" in (tmp_path / "config.ini").read_text()
    (tmp_path / "other.ini").write_text(CONFIG)
    with pytest.raises(ToolError, match="Call read_file"):  # a miss that shows nothing: no read
        workspace.edit_file("other.ini", "completely unrelated text", "x")
    with pytest.raises(ToolError, match="has not been read"):
        workspace.edit_file("other.ini", "port = 8080", "port = 9090")
