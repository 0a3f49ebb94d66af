"""Model requests a workflow hands to its own local activities in-process, not as payloads.

A local activity runs in the worker process that runs the workflow task asking for it, and its input
is never recorded in the history (only its result is, as a marker). Yet the SDK encodes that input to
a payload in the workflow and decodes it again in the activity: for a model call that is the whole
conversation, on the turn's critical path, twice per tool-call turn, growing with the session (and,
with external storage, written to the payload store on every call). So the workflow hands the request
over here, under a key that is all the activity's input carries, and the activity reads it.

The table holds the requests weakly: an entry lasts as long as the workflow code awaiting that call
holds its request (every attempt of the call included) and goes when that code is done with it,
however it ends (the call answered, the workflow evicted from the worker's cache). A worker that
replays the workflow (after a crash) hands its requests over again, as it makes them again.
agcore is passed through Temporal's sandbox, so the workflow and the activity share this module.
"""

from __future__ import annotations

import itertools
import threading
import weakref

from agcore.llm.types import LLMRequest

__all__ = ["hand_over", "handed_over"]

_held: weakref.WeakValueDictionary[str, LLMRequest] = weakref.WeakValueDictionary()
_lock = threading.Lock()  # the workflow thread writes, the activities' event loop reads
# Keys only need to be unique in this process: they never enter a history, so they need not replay.
_serial = itertools.count()


def hand_over(request: LLMRequest, run_id: str) -> str:
    """Hold ``request`` for a local activity of workflow run ``run_id``; the key to read it with. The
    caller keeps ``request`` referenced until the call is answered (the table does not)."""
    key = f"{run_id}/{next(_serial)}"
    with _lock:
        _held[key] = request
    return key


def handed_over(key: str) -> LLMRequest | None:
    """The request held under ``key``; None if none is (its workflow code no longer holds it)."""
    with _lock:
        return _held.get(key)
