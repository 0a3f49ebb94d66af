"""The workflow sandbox agcore's workers run in: Temporal's, with agcore and its dependencies passed
through, and without entering it once per payload when nothing would read what it answers.

Before a workflow activation is decoded and after its completion is encoded, the worker asks the
workflow instance, for each payload (three passes each way), which serialization context applies, so
that a context-aware converter or codec can use it. A sandboxed instance answers by entering the
sandbox (running a line of code under its importer): about 27 times per tool-call turn, 2 ms of the
worker's CPU between one step of the turn and the next. agcore's converter (Temporal's pydantic one,
no codec) reads no context, so with it, and no external storage, the instance answers "no context"
without entering: the payloads are encoded exactly as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from temporalio.bridge.proto.workflow_activation import WorkflowActivation
from temporalio.bridge.proto.workflow_completion import WorkflowActivationCompletion
from temporalio.converter import (
    DataConverter,
    SerializationContext,
    StorageDriverStoreContext,
    WithSerializationContext,
    WorkflowSerializationContext,
)
from temporalio.worker import WorkflowInstance, WorkflowInstanceDetails
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions
from temporalio.workflow import Info

__all__ = ["AgcoreSandboxRunner", "reads_contexts", "workflow_runner"]

# agcore and what it stands on are plain, deterministic-by-construction code (every id and time goes
# through agcore._clock): passed through, they are imported once per worker, not once per workflow.
_PASSED_THROUGH = ("agcore", "pydantic", "pydantic_core", "dependency_injector", "pluggy", "anyio",
                   "sniffio", "json_repair", "yaml", "annotated_types", "typing_inspection")


def reads_contexts(converter: DataConverter) -> bool:
    """Whether anything in ``converter`` may read a payload's serialization context (a codec, external
    storage, or a context-aware payload or failure converter): agcore's own converter does not."""
    if converter.payload_codec is not None or converter.external_storage is not None:
        return True
    if issubclass(converter.failure_converter_class, WithSerializationContext):
        return True
    payload = converter.payload_converter
    sample = WorkflowSerializationContext(namespace="agcore", workflow_id="agcore")
    return isinstance(payload, WithSerializationContext) and payload.with_context(sample) is not payload


@dataclass(frozen=True)
class AgcoreSandboxRunner(SandboxedWorkflowRunner):
    """Temporal's ``SandboxedWorkflowRunner``; with ``contexts=False`` (a converter that reads no
    serialization context: ``reads_contexts``) its workflows answer the worker's per-payload context
    questions without entering the sandbox. Workflow code runs in the sandbox either way."""

    contexts: bool = True

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        """The sandboxed instance (answering context questions outside the sandbox unless ``contexts``)."""
        instance = super().create_instance(det)
        return instance if self.contexts else _ContextFree(instance)


class _ContextFree(WorkflowInstance):
    """A sandboxed workflow instance whose converter reads no context: the worker's context questions
    get "none" (the converter's own default) instead of a trip into the sandbox."""

    def __init__(self, sandboxed: WorkflowInstance) -> None:
        self._sandboxed = sandboxed

    def activate(self, act: WorkflowActivation) -> WorkflowActivationCompletion:
        return self._sandboxed.activate(act)

    def get_serialization_context(self, command_info: object) -> SerializationContext | None:
        return None

    def get_external_store_context(self, command_info: object) -> StorageDriverStoreContext:
        return StorageDriverStoreContext(target=None)  # no external storage to read it

    def get_info(self) -> Info:
        return self._sandboxed.get_info()

    def get_thread_id(self) -> int | None:
        return self._sandboxed.get_thread_id()  # a deadlocked activation's frames are found by it


def workflow_runner(*, contexts: bool = True) -> AgcoreSandboxRunner:
    """Temporal's sandbox with agcore and its dependencies passed through; ``contexts=False`` for a
    data converter that reads no serialization context (``reads_contexts``), which ``create_worker``
    and ``create_replayer`` work out from theirs."""
    return AgcoreSandboxRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules(*_PASSED_THROUGH),
        contexts=contexts,
    )
