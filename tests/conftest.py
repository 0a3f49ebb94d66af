"""Shared fixtures. Async tests are marked ``@pytest.mark.anyio`` and run on asyncio and trio."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[1]
#: Where `make` installs the test packages (tests/downstream_pkg, examples/agcore_example_pkg): not
#: into the environment itself, so their entry-point plugins load only into test runs.
TEST_SITE = Path(sys.prefix) / "test-site"
_TEST_PACKAGE_SOURCES = (
    _ROOT / "tests" / "downstream_pkg" / "src",
    _ROOT / "examples" / "agcore_example_pkg" / "src",
)


def _see_the_test_packages() -> None:
    """Put the test packages on this run's path (and its subprocesses'): their code from the source
    tree, so an edit needs no reinstall, and their entry points from the metadata in TEST_SITE.
    Without TEST_SITE (no `make` run) the tests that need them skip, saying how to install them."""
    if not TEST_SITE.is_dir():
        return
    entries = [str(path) for path in (*_TEST_PACKAGE_SOURCES, TEST_SITE)]
    sys.path[1:1] = [entry for entry in entries if entry not in sys.path]
    inherited = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([*entries, *([inherited] if inherited else [])])


_see_the_test_packages()


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _mock_httpx2_transport_with_respx() -> None:
    """anthropic 2.x and openai 3.x send through httpx2/httpcore2; respx patches httpcore's pool
    by default, so add httpcore2's to its targets and respx intercepts the SDKs' real clients."""
    try:
        import httpcore2  # noqa: F401
    except ImportError:
        return
    from respx.mocks import HTTPCoreMocker

    HTTPCoreMocker.add_targets("httpcore2._async.connection_pool.AsyncConnectionPool")


_mock_httpx2_transport_with_respx()
