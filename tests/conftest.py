"""Shared fixtures. Async tests are marked ``@pytest.mark.anyio`` and run on asyncio and trio."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
