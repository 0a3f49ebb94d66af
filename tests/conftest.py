"""Shared fixtures. Async tests are marked ``@pytest.mark.anyio`` and run on asyncio and trio."""

from __future__ import annotations

import pytest


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
