"""`-j N` over many targets: each target runs in a worker process of its own, up to N at once.

Why processes: the targets of one run (a `[[targets]]` file, several `--server`s, the reference
servers) share nothing, and one process judging many servers at once spends its time in one
interpreter; a worker per target uses every core. A worker is `python -m conformance.engine.workers`:
it reads its job (one target, its check IDs and the run's settled options) as a pickle on stdin, runs
it as a run of one target (`engine.plan`, so the same engine, verdicts and report), and writes
JSON lines on the stdout it was given: one per target event and finished case (for live progress, a
case without its evidence and transcript), then its canonical report. The parent joins the reports in
target order by merge's rules (`compare.join_targets`), so the report is the one a single process
would have written, case for case.

A worker stops when its stdin closes: the parent closes it on Ctrl-C (each worker then finishes its
report marked incomplete, as a run in one process does) and it closes by itself if the parent dies,
so no worker outlives its run. Workers run in sessions of their own (the terminal's Ctrl-C reaches the
parent only, which passes it on), every wait for one is bounded once it has been told to stop, and one
that crashes or writes no report leaves the run incomplete, saying which target and why. What a worker
writes on stderr (the harness's own warnings) is passed on to the parent's.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import pickle
import signal
import struct
import sys
import threading
from collections.abc import Sequence
from typing import IO, Any

from conformance.engine.checks import Check
from conformance.engine.context import RunOptions
from conformance.engine.events import (
    CaseFinished,
    Event,
    Fanout,
    Sink,
    TargetFinished,
    TargetStarted,
)
from conformance.engine.results import CaseResult, case_key
from conformance.model.targets import Target
from conformance.reporting.canonical import ReportBuilder
from conformance.text import readable

#: Seconds a worker told to stop (its stdin closed) may take to write its partial report.
STOP_GRACE = 20.0
#: The largest line a worker writes: its report (transcripts included) is one line.
LINE_LIMIT = 1 << 30


def spread(plan: Sequence[tuple[Target, Sequence[Check]]], options: RunOptions) -> bool:
    """Whether this run goes to worker processes: more than one target and `-j` above 1."""
    return options.jobs > 1 and len(plan) > 1


async def run_spread(
    plan: Sequence[tuple[Target, Sequence[Check]]],
    options: RunOptions,
    builder: ReportBuilder,
    sinks: Sequence[Sink] = (),
) -> None:
    """Run each target of `plan` in a worker process, at most `options.jobs` at once, and put their
    targets and cases, joined in plan order, into `builder`'s report; `sinks` see the events in plan
    order as the cases finish. Cancelled (Ctrl-C), it stops every worker and keeps what they judged."""
    from conformance.engine.runner import OrderedEvents
    from conformance.reporting import canonical, compare

    workers = min(options.jobs, len(plan))
    # What `-j` allows beyond one process per target goes to each worker's own probes and revisions.
    inner = dataclasses.replace(options, jobs=max(1, options.jobs // len(plan)))
    ordered = OrderedEvents(Fanout(list(sinks)))
    slots = [ordered.root.child() for _ in plan]
    limit = asyncio.Semaphore(workers)
    results: list[dict[str, Any] | None] = [None] * len(plan)
    problems: list[str] = []
    stop = asyncio.Event()

    async def one(index: int, target: Target, checks: Sequence[Check]) -> None:
        async with limit:
            if stop.is_set():
                return
            try:
                results[index] = await _worker(index, target, checks, inner, ordered, slots[index], stop)
            except WorkerFailed as exc:
                problems.append(f"the worker of target {index} ({target.describe()}) {exc}")
            except (OSError, ValueError) as exc:
                problems.append(f"the worker of target {index} ({target.describe()}) failed: {exc!r}")
            finally:
                ordered.close(slots[index])

    tasks = [asyncio.ensure_future(one(i, target, checks)) for i, (target, checks) in enumerate(plan)]
    interrupted = False
    try:
        await asyncio.wait(tasks)  # unlike gather, a cancelled wait leaves the workers' tasks running
    except asyncio.CancelledError:
        interrupted = True
        stop.set()  # every worker is told to stop; each still hands in what it judged
        await asyncio.wait(tasks)
    reports = [(f"target {i}", report) for i, report in enumerate(results) if report is not None]
    targets, cases = compare.join_targets(reports)
    # Each worker kept its cases within a run's budget: together they keep within one.
    builder.report["targets"], builder.report["cases"] = targets, canonical.bound_cases(cases)
    incomplete = [name for name, report in reports if not report["footer"].get("complete")]
    if interrupted:
        builder.finish(False, "interrupted")
    elif problems or incomplete or len(reports) < len(plan):
        said = problems or [f"incomplete report from {', '.join(incomplete)}"]
        builder.finish(False, "; ".join(said))
    else:
        builder.finish(True)


class WorkerFailed(Exception):
    """A worker ended without a report: the message says how (its exit status, its last words)."""


async def _worker(
    index: int,
    target: Target,
    checks: Sequence[Check],
    options: RunOptions,
    ordered: Any,
    slot: Any,
    stop: asyncio.Event,
) -> dict[str, Any] | None:
    job = pickle.dumps((target, [c.id for c in checks], sorted({c.suite for c in checks}), options))
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "conformance.engine.workers",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
        limit=LINE_LIMIT,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    said = bytearray()

    async def relay_stderr() -> None:
        """What a worker says on stderr (the harness's own warnings) is the run's, as in one process."""
        assert proc.stderr is not None
        while chunk := await proc.stderr.read(65536):
            said[:] = (said + chunk)[-4000:]
            sys.stderr.write(chunk.decode("utf-8", "replace"))
            sys.stderr.flush()

    stderr = asyncio.ensure_future(relay_stderr())
    report: dict[str, Any] | None = None

    async def read() -> None:
        nonlocal report
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            message = json.loads(line)
            if "report" in message:
                report = message["report"]
            else:
                event = _event(message, index)
                if event is not None:
                    ordered.emit(slot, event)

    try:
        proc.stdin.write(struct.pack(">Q", len(job)) + job)
        await proc.stdin.drain()
        reading = asyncio.ensure_future(read())
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait({reading, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not reading.done():  # told to stop: close its stdin, then give it a bounded time to report
            proc.stdin.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(reading), STOP_GRACE)
        stopping.cancel()
        if not reading.done():
            reading.cancel()
        elif reading.exception() is not None:
            raise WorkerFailed(f"sent a line that could not be read: {reading.exception()!r}")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), STOP_GRACE)
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
        if not proc.stdin.is_closing():
            proc.stdin.close()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stderr, 5.0)
    if report is None:
        last = [line for line in said.decode("utf-8", "replace").splitlines() if line.strip()][-1:]
        raise WorkerFailed(
            f"wrote no report (exit status {proc.returncode})"
            + (f": {last[0].strip()[:300]}" if last else "")
        )
    return report


def _event(message: dict[str, Any], index: int) -> Event | None:
    """A worker's progress line as the event the parent's sinks see, numbered as the target is in the run."""
    if "started" in message or "finished" in message:
        info = {**(message.get("started") or message["finished"]), "index": index}
        return TargetStarted(index, info) if "started" in message else TargetFinished(index, info)
    if "case" in message:
        case = dict(message["case"])
        case["target"] = index
        case["key"] = case_key(case["check"], case["transport"], case["revision"], index)
        return CaseFinished(CaseResult.from_dict(case))
    return None


# --------------------------------------------------------------------------- the worker's side


class _Relay:
    """The worker's sink: each event as one JSON line on the parent's channel."""

    def __init__(self, channel: IO[str]) -> None:
        self.channel = channel

    def handle(self, event: Event) -> None:
        if isinstance(event, TargetStarted | TargetFinished):
            kind = "started" if isinstance(event, TargetStarted) else "finished"
            self._send({kind: event.info})
        elif isinstance(event, CaseFinished):
            case = {**event.result.as_dict(), "evidence": {}, "transcript": []}
            self._send({"case": case})

    def _send(self, message: dict[str, Any]) -> None:
        self.channel.write(json.dumps(message, ensure_ascii=False, default=readable) + "\n")
        self.channel.flush()


def _read_job() -> tuple[Target, list[str], list[str], RunOptions]:
    head = _read_exactly(8)
    job: tuple[Target, list[str], list[str], RunOptions] = pickle.loads(
        _read_exactly(struct.unpack(">Q", head)[0])
    )
    return job


def _read_exactly(size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = os.read(0, size - len(data))
        if not chunk:
            raise SystemExit("mcp-conformance worker: the job ended early")
        data += chunk
    return data


def _stop_when_stdin_closes() -> None:
    """Ctrl-C for this worker when its stdin closes: the parent stopped it, or is gone."""

    def watch() -> None:
        with contextlib.suppress(OSError):
            while os.read(0, 4096):
                pass
        # To the main thread: `raise_signal` here would reach this thread alone, and the main thread,
        # asleep in the event loop's select for as long as a case's timeout, would hear it only then.
        main = threading.main_thread().ident
        assert main is not None
        signal.pthread_kill(main, signal.SIGINT)

    threading.Thread(target=watch, name="stdin-watch", daemon=True).start()


def main() -> int:
    from conformance.engine import plan as planned
    from conformance.engine.checks import load_pack

    # Started from a job that ignores SIGINT (a background shell job, nohup), a worker would inherit
    # that and never stop: its stop signal is SIGINT (`_stop_when_stdin_closes`), so it is always heard.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # SIGTERM sent to a worker itself (a CI killing every process) stops it as its parent's stop does:
    # it still writes its partial report and stops its servers, instead of leaving them behind.
    signal.signal(signal.SIGTERM, lambda *_: signal.raise_signal(signal.SIGINT))
    target, check_ids, suites, options = _read_job()
    # The parent's channel is this stdout; anything else that writes to fd 1 goes to stderr instead.
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    by_id = {c.id: c for suite in suites for c in load_pack(suite)}
    plan = [(target, [by_id[check] for check in check_ids])]
    builder = planned.new_builder(plan)
    interrupted = False
    _stop_when_stdin_closes()
    try:
        asyncio.run(planned.run_in_process(plan, options, builder, [_Relay(channel)]))
    except KeyboardInterrupt:
        interrupted = True
    report = planned.finish(builder, interrupted=interrupted)
    with contextlib.suppress(BrokenPipeError):
        channel.write(json.dumps({"report": report}, ensure_ascii=False, default=readable) + "\n")
        channel.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
