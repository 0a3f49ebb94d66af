"""``FileStorageDriver``: a claim-check for large payloads, kept as files in a shared directory.

Every model call carries the conversation so far, so a long session's or plan's requests grow past
what a Temporal history should hold (2 MB per payload, 50 MB per run). With Temporal's external
storage (``connect(..., external_storage=...)``), a payload above the threshold is written elsewhere
and the history holds only its claim. This driver writes each payload to ``directory`` under its
SHA-256 (identical payloads are stored once) and checks the hash when reading it back; workers,
clients and replayers must all see the same directory (a shared volume). For object stores, use
Temporal's own drivers (``temporalio.contrib.aws.s3driver``, ``temporalio.contrib.gcp.gcsdriver``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import anyio
from temporalio.api.common.v1 import Payload
from temporalio.converter import (
    StorageDriver,
    StorageDriverClaim,
    StorageDriverRetrieveContext,
    StorageDriverStoreContext,
)

from agcore._clock import new_id

__all__ = ["FileStorageDriver"]


class FileStorageDriver(StorageDriver):
    """Payloads as files in ``directory`` (created if missing), named by their SHA-256."""

    def __init__(self, directory: str | os.PathLike[str], *, name: str = "agcore-files") -> None:
        self.directory = Path(directory)
        self._name = name

    def name(self) -> str:
        return self._name

    def type(self) -> str:
        return "agcore.files"

    async def store(
        self, context: StorageDriverStoreContext, payloads: Sequence[Payload]
    ) -> list[StorageDriverClaim]:
        await anyio.Path(self.directory).mkdir(parents=True, exist_ok=True)
        claims = []
        for payload in payloads:
            data = payload.SerializeToString()
            digest = hashlib.sha256(data).hexdigest()
            path = anyio.Path(self.directory / f"{digest}.payload")
            if not await path.exists():
                # Written aside and renamed: a reader never sees half a payload.
                partial = anyio.Path(self.directory / f".{digest}.{new_id()}.partial")
                await partial.write_bytes(data)
                await partial.rename(path)
            claims.append(StorageDriverClaim(claim_data={"sha256": digest}))
        return claims

    async def retrieve(
        self, context: StorageDriverRetrieveContext, claims: Sequence[StorageDriverClaim]
    ) -> list[Payload]:
        payloads = []
        for claim in claims:
            digest = claim.claim_data["sha256"]
            path = anyio.Path(self.directory / f"{digest}.payload")
            try:
                data = await path.read_bytes()
            except FileNotFoundError:
                raise FileNotFoundError(
                    f"payload {digest} is not in {self.directory}: every worker, client and replayer "
                    "must use the same storage directory"
                ) from None
            if hashlib.sha256(data).hexdigest() != digest:
                raise ValueError(f"payload file {path} does not match its hash: it was changed or torn")
            payload = Payload()
            payload.ParseFromString(data)
            payloads.append(payload)
        return payloads

    def __repr__(self) -> str:
        return f"FileStorageDriver({str(self.directory)!r})"
