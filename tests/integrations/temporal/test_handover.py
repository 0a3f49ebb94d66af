"""A local model call's request stays in the worker process: the workflow hands it to the activity
in-process, so the conversation is not encoded (nor written to a payload store) on every call."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.client import Client
from temporalio.converter import ExternalStorage
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from agcore.integrations.temporal import (
    ActivityOptions,
    AgentActivities,
    DurableSession,
    FileStorageDriver,
    connect,
    create_replayer,
    create_worker,
)
from agcore.integrations.temporal._types import LLMCallInput
from tests.integrations.temporal._agents import make_bundle

pytestmark = pytest.mark.anyio


def _stored_requests(store: Path) -> list[dict[str, object]]:
    """The model-call inputs carrying a request among the payloads in ``store``."""
    found = []
    for path in store.glob("*.payload"):
        payload = Payload.FromString(path.read_bytes())
        try:
            data = json.loads(payload.data)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("request"), dict):
            found.append(data)
    return found


@pytest.mark.parametrize("local", [True, False], ids=["local", "scheduled"])
async def test_a_local_model_calls_request_is_neither_encoded_nor_stored(
    client: Client, tmp_path: Path, local: bool
) -> None:
    store = tmp_path / "payloads"
    storage = ExternalStorage(drivers=[FileStorageDriver(store)], payload_size_threshold=2048)
    stored = await connect(client.service_client.config.target_host, external_storage=storage)
    task_queue = f"handover-{uuid.uuid4().hex[:8]}"
    big = "x" * 3000  # every request carries it: over the store's threshold
    activities = AgentActivities(make_bundle)
    async with create_worker(stored, make_bundle, task_queue=task_queue, activities=activities):
        session = await DurableSession.start(stored, f"s-{task_queue}", task_queue=task_queue,
                                             options=ActivityOptions(local_model_calls=local))
        outcome = await session.turn(f'call echo {{"text": "{big}"}}')
        assert outcome.text == f"done: echoed {big}"
        await session.close()
    assert activities.calls["llm_call"] == 2
    requests = _stored_requests(store)
    if local:
        assert requests == []  # handed over in the worker, never a payload
    else:
        assert len(requests) == 2  # a scheduled call's request travels through the server
    replayer = create_replayer(external_storage=storage)
    history = await stored.get_workflow_handle(f"s-{task_queue}").fetch_history()
    assert (await replayer.replay_workflow(history)).replay_failure is None


async def test_a_call_whose_request_was_not_handed_over_fails_in_words() -> None:
    activities = AgentActivities(make_bundle)
    with pytest.raises(ApplicationError) as caught:
        await ActivityEnvironment().run(activities.llm_call, LLMCallInput(request_key="no-such-run/1"))
    assert caught.value.non_retryable
    assert "was not handed over" in caught.value.message
    assert "local_model_calls=False" in caught.value.message
