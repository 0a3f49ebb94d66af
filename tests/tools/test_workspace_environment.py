"""A command's environment is an allow-list: PATH, locale, terminal, toolchain settings and what the
user names; HOME is a private directory; everything else is dropped whatever its name."""

from __future__ import annotations

import fnmatch
import json
import logging
import os
import shlex
import sys
from pathlib import Path

import pytest

from agcore.tools.workspace import DEFAULT_ENV_ALLOW, Workspace
from agcore.tools.workspace._environment import CommandEnvironment
from tests.tools.sandbox_support import require_bwrap

PY = shlex.quote(sys.executable)
DUMP = f"{PY} -c \"import os, json; print('ENV=' + json.dumps(dict(os.environ)))\""


async def _environment_of(ws: Workspace) -> dict[str, str]:
    out = await ws.run_command(DUMP)
    line = next(x for x in out.splitlines() if x.startswith("ENV="))
    return dict(json.loads(line[4:]))


@pytest.fixture(params=["off", "required"])
def ws(tmp_path: Path, request: pytest.FixtureRequest) -> Workspace:
    """Guard-only and sandboxed: both build the environment the same way."""
    if request.param == "required":
        require_bwrap()
    root = tmp_path / "ws"
    root.mkdir()
    return Workspace(root, sandbox=request.param)


@pytest.mark.anyio
async def test_secrets_named_like_nothing_are_dropped(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "SECRET_KEY_BASE": "FAKE-RAILS", "STRIPE_LIVE": "FAKE-STRIPE", "MYAPP_SIGNING": "FAKE-SIGN",
        "OPENAI_API_KEY": "FAKE-OPENAI", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm",
        "VIRTUAL_ENV": "/venv", "PYTHONDONTWRITEBYTECODE": "1", "PYTHON_API_KEY": "FAKE-PY",
        "https_proxy": "http://u:FAKE-PROXYPASS@proxy:3128", "no_proxy": "localhost",
    }.items():  # fmt: skip
        monkeypatch.setenv(name, value)
    env = await _environment_of(ws)
    assert not [v for v in env.values() if "FAKE" in v], env
    for name in ("LANG", "LC_ALL", "TERM", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE", "no_proxy", "PATH"):
        assert name in env, name
    assert set(env) <= {"HOME", "PWD", "TMPDIR", "PYTHONUNBUFFERED", "AGCORE_COMMAND_TAG"} | {
        n for n in env if any(fnmatch.fnmatchcase(n, p) for p in DEFAULT_ENV_ALLOW)
    }


@pytest.mark.anyio
async def test_home_is_a_private_directory(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    real_home = Path.home()
    env = await _environment_of(ws)
    home = Path(env["HOME"])
    assert home != real_home
    assert home == ws.private_home()
    assert env["PWD"] == str(ws.root)
    out = await ws.run_command(f"{PY} -c \"import os; print(sorted(os.listdir(os.path.expanduser('~'))))\"")
    assert "[]" in out or "['.gitconfig']" in out  # nothing of the user's but their git identity


@pytest.mark.anyio
async def test_names_the_user_allows_pass_with_a_warning_when_they_look_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "FAKE-GH")
    monkeypatch.setenv("MY_SETTING", "plain")
    monkeypatch.setenv("AGCORE_ENV_ALLOW", "MY_SETTING")
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(root, sandbox="off", env_allow=["GITHUB_TOKEN"])
    with caplog.at_level(logging.WARNING, logger="agcore.tools.workspace"):
        env = await _environment_of(ws)
    assert env["GITHUB_TOKEN"] == "FAKE-GH"
    assert env["MY_SETTING"] == "plain"
    warnings = [r.getMessage() for r in caplog.records]
    assert any("GITHUB_TOKEN looks like a secret" in w for w in warnings), warnings
    assert not any("MY_SETTING" in w for w in warnings)


def test_set_variables_win_and_defaults_fill_in() -> None:
    built = CommandEnvironment(("KEEP",), (("EXTRA", "x"), ("LANG", "C"))).build(
        {"KEEP": "k", "LANG": "de_DE.UTF-8", "DROP": "d"}, home="/h", tmpdir="/t", cwd="/w"
    )
    assert built == {
        "KEEP": "k", "LANG": "C", "EXTRA": "x", "HOME": "/h", "TMPDIR": "/t", "PWD": "/w",
        "PATH": os.defpath, "PYTHONUNBUFFERED": "1",
    }  # fmt: skip


@pytest.mark.anyio
async def test_git_commits_work_with_the_users_identity_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        '[user]\n\tname = Ada Lovelace Test\n\temail = ada@example.com\n[alias]\n\tx = !touch PWNED\n'
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    root = tmp_path / "ws"
    root.mkdir()
    ws = Workspace(root, sandbox="off", confirm_commands=False)
    out = await ws.run_command("git init -q && git commit -qm 1 --allow-empty && git log -1 --format=%an/%ae")
    assert "Ada Lovelace Test/ada@example.com" in out, out
    assert "alias" not in (ws.private_home() / ".gitconfig").read_text()
