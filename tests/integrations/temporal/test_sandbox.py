"""The sandbox agcore's workers run workflows in: workflow code is still checked by Temporal's sandbox,
while payloads are encoded without entering it when the converter reads no serialization context."""

from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.client import Client
from temporalio.converter import ExternalStorage, PayloadCodec

from agcore.hooks import hookimpl
from agcore.integrations.temporal import (
    DATA_CONVERTER,
    DurableSession,
    FileStorageDriver,
    create_worker,
    data_converter,
)
from agcore.integrations.temporal._sandbox import reads_contexts
from tests.integrations.temporal._agents import make_bundle

pytestmark = pytest.mark.anyio


class _Reversing(PayloadCodec):
    """A codec (as an encrypting one would be): it may read each payload's context."""

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [Payload(metadata=p.metadata, data=p.data[::-1]) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [Payload(metadata=p.metadata, data=p.data[::-1]) for p in payloads]


def test_agcores_converter_reads_no_context_and_a_codec_or_a_store_may(tmp_path: Path) -> None:
    import dataclasses

    assert not reads_contexts(DATA_CONVERTER)
    stored = data_converter(ExternalStorage(drivers=[FileStorageDriver(tmp_path)]))
    assert reads_contexts(stored)
    assert reads_contexts(dataclasses.replace(DATA_CONVERTER, payload_codec=_Reversing()))


class _ReadsAFile:
    """A workflow plugin doing I/O, which workflow code must not: the sandbox refuses it."""

    @hookimpl
    def before_tool_call(self, ctx: object, call: object) -> None:
        with open(os.devnull) as handle:
            handle.read()


async def test_workflow_plugins_still_run_in_the_sandbox(client: Client) -> None:
    task_queue = f"sandbox-{uuid.uuid4().hex[:8]}"
    async with create_worker(client, make_bundle, task_queue=task_queue,
                             workflow_plugins=lambda: [_ReadsAFile()]):
        session = await DurableSession.start(client, f"s-{task_queue}", task_queue=task_queue)
        outcome = await session.turn('call echo {"text": "hi"}')
        await session.close()
    # The loop ends the turn with the hook's error, as in-process: the sandbox refused the open().
    assert outcome.stop == "error"
    assert outcome.error is not None
    assert "RestrictedWorkflowAccessError" in outcome.error
    assert "__builtins__.open" in outcome.error
