"""Where a durable tool-call turn's time goes, in measures that hold on a loaded machine (CPU time,
counts, bytes), plus a timeline of one turn (wall clock: meaningful only on a quiet machine).

One session on an in-process worker (the weather turn of ``agent_loop.py`` against the loopback fake
vendor, a dev server with ``DEV_SERVER_ARGS``), ``--turns`` turns after a warm-up, and per turn:

* **process CPU**: this process (client and worker) by thread, and the dev server;
* **workflow activations**: how many, their jobs, and the workflow thread's CPU inside each (the
  loop, Temporal's sandbox, payload conversion in the workflow);
* **sandbox entries**: the SDK entering the sandbox per payload to ask its serialization context;
* **activities**: how many, local or scheduled, the CPU of each;
* **payloads**: conversions to and from payloads (count, bytes, CPU) by the Python type converted;
* **the SDK core's calls**: the wall and CPU time of the calls that hand a completed activation or
  activity back to the SDK's core (the main thread waits in them);
* **client RPCs** per turn, and the **history**: events and bytes per turn, by event type;
* **timeline**: each step's median offset from the client sending the turn's Update;
* ``--profile`` (every activation) or ``--profile-main`` (the main thread): the top functions.

    python bench/temporal_breakdown.py --turns 30 [--no-sandbox] [--idempotent] [--profile]

It patches the SDK's internals to look (this is a measuring tool, never a dependency of agcore).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402

from bench.agent_loop import QUESTION  # noqa: E402
from bench.llm_overhead import start_server  # noqa: E402
from bench.temporal import BASE_URL_ENV, make_bundle  # noqa: E402


class Tally:
    """What the patched seams saw while ``on`` (counts, CPU seconds, bytes), keyed by name."""

    def __init__(self) -> None:
        self.on = False
        self.count: Counter[str] = Counter()
        self.cpu: defaultdict[str, float] = defaultdict(float)
        self.size: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.profile: cProfile.Profile | None = None

    def add(self, key: str, cpu: float = 0.0, size: int = 0) -> None:
        if not self.on:
            return
        with self.lock:
            self.count[key] += 1
            self.cpu[key] += cpu
            self.size[key] += size


TALLY = Tally()
#: (perf_counter, what) marks of the measured turns, for the timeline.
MARKS: list[tuple[float, str]] = []


def mark(what: str) -> None:
    if TALLY.on:
        MARKS.append((time.perf_counter(), what))


def _timed(key: Callable[..., str], method: Callable[..., Any], size: Callable[..., int] | None = None
           ) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        result = method(*args, **kwargs)
        measured = size(args, result) if size is not None else 0
        TALLY.add(key(*args, **kwargs), time.thread_time() - started, measured)
        return result
    return wrapper


def _type_names(values: Any) -> str:
    return ",".join(type(v).__name__ for v in values) or "-"


def instrument(profile: bool, sandbox: bool) -> None:
    """Patch the SDK's seams (temporalio is passed through the sandbox: its classes are the same
    inside); with ``profile``, only the activations (the other wrappers would be most of a profile)."""
    _time_activations(sandbox)
    if sandbox:
        _count_sandbox_entries()
    if profile:
        TALLY.profile = cProfile.Profile()
        return
    _measure_payloads()
    _time_core_calls()
    _count_client_rpcs()


def _time_activations(sandbox: bool) -> None:
    from temporalio.worker import _workflow_instance
    from temporalio.worker.workflow_sandbox import _runner

    def activation_key(instance: Any, act: Any) -> str:
        jobs = sorted({job.WhichOneof("variant") for job in act.jobs})
        return "activation[" + "+".join(jobs) + "]"

    # The sandboxed instance runs an unsandboxed one inside: patch only the outer one.
    cls = _workflow_instance._WorkflowInstanceImpl if not sandbox else _runner._Instance
    original = cls.activate

    def activate(self: Any, act: Any) -> Any:
        key = activation_key(self, act)
        mark(key + " start")
        if TALLY.profile is not None and TALLY.on:
            TALLY.profile.enable()
        try:
            return original(self, act)
        finally:
            if TALLY.profile is not None:
                TALLY.profile.disable()
            mark(key + " end")

    cls.activate = _timed(activation_key, activate)  # type: ignore[method-assign]


def _count_sandbox_entries() -> None:
    from temporalio.worker.workflow_sandbox import _runner

    for name in ("get_serialization_context", "get_external_store_context"):
        def key(self: Any, info: Any, _name: str = name) -> str:
            return f"sandbox entry: {_name}"

        setattr(_runner._Instance, name, _timed(key, getattr(_runner._Instance, name)))


def _measure_payloads() -> None:
    from temporalio.converter import CompositePayloadConverter

    to_payloads = CompositePayloadConverter.to_payloads
    from_payloads = CompositePayloadConverter.from_payloads
    CompositePayloadConverter.to_payloads = _timed(  # type: ignore[method-assign]
        lambda self, values: "to_payload " + _type_names(values), to_payloads,
        lambda args, result: sum(len(p.data) for p in result))
    CompositePayloadConverter.from_payloads = _timed(  # type: ignore[method-assign]
        lambda self, payloads, type_hints=None: "from_payload " + (
            ",".join(getattr(t, "__name__", str(t)) for t in type_hints) if type_hints else "-"),
        from_payloads,
        lambda args, result: sum(len(p.data) for p in args[1]))


def _time_core_calls() -> None:
    from temporalio.bridge.worker import Worker as BridgeWorker

    for name in ("complete_workflow_activation", "complete_activity_task"):
        async def completing(self: Any, comp: Any, _name: str = name) -> None:
            wall, cpu = time.perf_counter(), time.thread_time()
            awaitable = getattr(self._ref, _name)(comp.SerializeToString())  # the call, not its await
            TALLY.add(f"core {_name} call (wall)", time.perf_counter() - wall)
            TALLY.add(f"core {_name} call (CPU)", time.thread_time() - cpu)
            await awaitable

        setattr(BridgeWorker, name, completing)


def _count_client_rpcs() -> None:
    from temporalio.service import _BridgeServiceClient

    rpc_call = _BridgeServiceClient._rpc_call

    async def counted_rpc(self: Any, rpc: str, *args: Any, **kwargs: Any) -> Any:
        TALLY.add(f"client RPC {rpc}")
        return await rpc_call(self, rpc, *args, **kwargs)

    _BridgeServiceClient._rpc_call = counted_rpc  # type: ignore[method-assign]


def interceptors() -> list[Any]:
    """A worker interceptor marking each activity's start and end."""
    from temporalio import activity
    from temporalio.worker import ActivityInboundInterceptor, Interceptor

    class Marking(ActivityInboundInterceptor):
        async def execute_activity(self, input: Any) -> Any:
            info = activity.info()
            name = f"{'local ' if info.is_local else ''}{info.activity_type}"
            mark(name + " start")
            started = time.thread_time()
            try:
                return await super().execute_activity(input)
            finally:
                TALLY.add("activity " + name, time.thread_time() - started)
                mark(name + " end")

    class Marks(Interceptor):
        def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
            return Marking(next)

    return [Marks()]


def timeline(turn_starts: list[float], turn_ends: list[float]) -> list[str]:
    """Each mark's median offset from its turn's start (ms), in order."""
    import statistics

    offsets: defaultdict[str, list[float]] = defaultdict(list)
    for start, end in zip(turn_starts, turn_ends, strict=True):
        seen: Counter[str] = Counter()
        for at, what in MARKS:
            if start <= at <= end:
                seen[what] += 1
                offsets[f"{what} #{seen[what]}"].append((at - start) * 1000)
        offsets["turn result at the client"].append((end - start) * 1000)
    rows = sorted(offsets.items(), key=lambda item: statistics.median(item[1]))
    return [f"  {statistics.median(values):7.2f}  {what}" for what, values in rows
            if len(values) >= len(turn_starts) // 2]


def _dev_server_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_pid() -> int | None:
    """The dev server: this process's child running the ``temporal`` binary."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name, rest = text.split("(", 1)[1].rsplit(")", 1)
        if name == "temporal" and int(rest.split()[1]) == os.getpid():
            return int(stat.parent.name)
    return None


def thread_cpu() -> dict[str, float]:
    """CPU seconds of each of this process's threads so far, by name (Python's name where it has
    one, else the kernel's: the SDK core's Rust threads)."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    found: defaultdict[str, float] = defaultdict(float)
    for stat in Path("/proc/self/task").glob("*/stat"):
        comm, rest = stat.read_text().split("(", 1)[1].rsplit(")", 1)
        fields = rest.split()
        tid = int(stat.parent.name)
        name = names.get(tid, comm)
        name = "workflow executor" if name.startswith("ThreadPoolExecutor") else name
        found[name] += (int(fields[11]) + int(fields[12])) / tick
    return found


async def history_by_event(client: Any, workflow_id: str) -> tuple[Counter[str], Counter[str]]:
    """Events and their encoded bytes in a workflow's history, by event type."""
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    events: Counter[str] = Counter()
    size: Counter[str] = Counter()
    for event in history.events:
        name = event.WhichOneof("attributes") or "?"
        events[name] += 1
        size[name] += event.ByteSize()
    return events, size


async def run(args: argparse.Namespace) -> None:
    from temporalio.testing import WorkflowEnvironment
    from temporalio.worker import UnsandboxedWorkflowRunner

    from agcore.integrations.temporal import DATA_CONVERTER, DEV_SERVER_ARGS, DurableSession, create_worker

    instrument(args.profile, sandbox=not args.no_sandbox)
    server, port = start_server()
    os.environ[BASE_URL_ENV] = f"http://127.0.0.1:{port}/v1"
    binary = str(Path(sys.executable).parent / "temporal")
    extra = [arg for value in args.dynamic_config for arg in ("--dynamic-config-value", value)]
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=binary, data_converter=DATA_CONVERTER,
        dev_server_extra_args=["--log-level", "error", *DEV_SERVER_ARGS, *extra],
    )
    pid = _server_pid()
    options: dict[str, Any] = {"interceptors": interceptors()}
    if args.no_sandbox:
        options["workflow_runner"] = UnsandboxedWorkflowRunner()
    if args.idempotent:
        options["idempotent_tools"] = ["get_weather"]
    try:
        client = env.client
        queue = f"breakdown-{uuid.uuid4().hex[:6]}"
        async with create_worker(client, make_bundle, task_queue=queue, **options):
            session = await DurableSession.start(client, f"b-{queue}", task_queue=queue)
            for _ in range(args.warmup):
                await session.turn(QUESTION)
            before_events, before_size = await history_by_event(client, session.session_id)
            server_cpu = _dev_server_cpu(pid) if pid else 0.0
            cpu, wall, threads = time.process_time(), time.perf_counter(), thread_cpu()
            TALLY.on = True
            starts, ends = [], []
            main_profile = cProfile.Profile() if args.profile_main else None
            if main_profile is not None:
                main_profile.enable()
            for _ in range(args.turns):
                starts.append(time.perf_counter())
                outcome = await session.turn(QUESTION)
                ends.append(time.perf_counter())
                assert outcome.error is None, outcome.error
            TALLY.on = False
            if main_profile is not None:
                main_profile.disable()
                TALLY.profile = main_profile
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            threads = {name: seconds - threads.get(name, 0.0) for name, seconds in thread_cpu().items()}
            server_cpu = (_dev_server_cpu(pid) - server_cpu) if pid else float("nan")
            after_events, after_size = await history_by_event(client, session.session_id)
            await session.close()
    finally:
        await env.shutdown()
        server.terminate()
    report(args, Measured(cpu, wall, server_cpu, threads, timeline(starts, ends),
                          after_events - before_events, after_size - before_size))


class Measured(NamedTuple):
    cpu: float
    wall: float
    server_cpu: float
    threads: dict[str, float]
    marks: list[str]
    events: Counter[str]
    size: Counter[str]


def report(args: argparse.Namespace, measured: Measured) -> None:
    n = args.turns
    cpu, wall, server_cpu, threads, marks, events, size = measured
    print(f"{n} turns ({'no sandbox' if args.no_sandbox else 'sandbox'}"
          f"{', idempotent tool' if args.idempotent else ''}): wall {wall / n * 1000:.1f} ms/turn, "
          f"this process CPU {cpu / n * 1000:.1f} ms/turn, "
          f"dev server CPU {server_cpu / n * 1000:.1f} ms/turn")
    print("threads' CPU ms/turn: " + ", ".join(
        f"{name} {seconds / n * 1000:.1f}" for name, seconds in sorted(threads.items(), key=lambda t: -t[1])
        if seconds > 0))
    print("\nper turn                                                   count   CPU ms    bytes")
    for key in sorted(TALLY.count, key=lambda k: -TALLY.cpu[k]):
        print(f"  {key[:56]:56} {TALLY.count[key] / n:6.2f} {TALLY.cpu[key] / n * 1000:8.2f} "
              f"{TALLY.size[key] / n:8.0f}")
    print("\nhistory per turn                                  events      bytes")
    for name in sorted(events, key=lambda k: -size[k]):
        print(f"  {name[:48]:48} {events[name] / n:6.2f} {size[name] / n:10.0f}")
    print("\na turn's timeline (median ms from the client sending the Update)")
    print("\n".join(marks))
    if TALLY.profile is not None:
        out = io.StringIO()
        stats = pstats.Stats(TALLY.profile, stream=out)
        stats.sort_stats(args.sort).print_stats(args.top)
        if args.callers:
            stats.print_callers(args.callers)
        print(out.getvalue())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--no-sandbox", action="store_true")
    parser.add_argument("--idempotent", action="store_true", help="declare the tool idempotent")
    parser.add_argument("--dynamic-config", metavar="KEY=VALUE", action="append", default=[],
                        help="one more dynamic config value for the dev server (repeatable)")
    parser.add_argument("--profile", action="store_true", help="cProfile every activation")
    parser.add_argument("--profile-main", action="store_true",
                        help="cProfile the main thread (client, activities, the SDK's Python side)")
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--callers", help="with --profile: who calls the functions matching this")
    anyio.run(run, parser.parse_args())
    os._exit(0)


if __name__ == "__main__":
    main()
