"""Driving hypothesis against a live server: one exploration per (target, revision) and mode.

hypothesis's `@given` is synchronous and the harness is async, so each tool's property runs in a worker
thread (`asyncio.to_thread`) and calls the server on the harness's loop through
`asyncio.run_coroutine_threadsafe(...).result(timeout)`. A finding raises inside the property, so
hypothesis shrinks it; the last failing input hypothesis replays for each kind of finding is the shrunk
one. Every executed input is cached by its exact JSON, so shrinking and the final replay never see a
server that "changed its mind", and a call is never repeated. hypothesis winds down soon after a first
failure, so further rounds (new seeds, known findings passed over) spend the rest of the examples.

Bounds: examples per tool (`--fuzz-examples`), one wall-clock budget for all fuzzing of a target
(`--fuzz-budget`, split across the tools still to run), the per-request timeout, and a cap on how often
a tool may break the session before it is no longer called. Past a bound, the property passes without
calling the server, so hypothesis winds down at once and keeps the smallest failure it has.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from conformance.pack_api import (
    Call,
    CaseContext,
    HandshakeFailed,
    Model,
    Mutation,
    NotSent,
    Session,
    TransportError,
    TransportTimeout,
    hypothesis_home,
    jsonrpc,
)
from conformance_packs.base.common import error_texts, find_trace

#: Times one tool may break the session (hang, crash) before it is no longer called.
BREAKS_PER_TOOL = 3
#: hypothesis stops generating soon after its first failure; further rounds (new seeds, known findings
#: passed over) spend the rest of the example budget, so a first finding cannot hide a second.
MAX_ROUNDS = 4
#: Findings that mean the call was not answered, or the server did not live on.
TRANSPORT_KINDS = ("hang", "crash", "dead", "garbled")

_FAILURE_TYPES: dict[str, type[FuzzFailure]] = {}


class FuzzFailure(AssertionError):
    """Raised inside the property for a finding; one subclass per kind, so hypothesis shrinks each apart."""


def failure_type(kind: str) -> type[FuzzFailure]:
    if kind not in _FAILURE_TYPES:
        name = "Fuzz_" + "".join(c if c.isalnum() else "_" for c in kind)
        _FAILURE_TYPES[kind] = type(name, (FuzzFailure,), {})
    return _FAILURE_TYPES[kind]


def run_seed(ctx: CaseContext) -> int:
    seed = ctx.options.pack_option("fuzz_seed")
    return int(seed) if seed is not None else 0


def tool_seed(seed: int, mode: str, tool: str) -> int:
    """The hypothesis seed of one tool and mode: independent of which other tools or checks run."""
    return zlib.crc32(f"{seed}/{mode}/{tool}".encode())


@dataclass
class Example:
    """One input sent to the server and what came of it."""

    arguments: dict[str, Any]
    mutation: Mutation | None
    excerpt: dict[str, Any]
    #: The transcript entries of this input (call, ping, restarts), for a finding's evidence.
    entries: list[dict[str, Any]]
    #: (kind, message) of each finding, the one hypothesis shrinks first.
    findings: list[tuple[str, str]]
    code: Any = None

    def size(self) -> int:
        return len(json.dumps(self.arguments, ensure_ascii=False))


@dataclass
class Finding:
    kind: str
    message: str
    example: Example
    #: Whether hypothesis shrank it (False: the smallest input seen with this kind, e.g. when a bound hit).
    shrunk: bool
    count: int


@dataclass
class ToolRun:
    tool: str
    mode: str
    seed: int
    examples: int = 0
    seconds: float = 0.0
    #: Why the run sent fewer examples than asked (a bound), or "".
    stopped: str = ""
    #: Why the tool was not fuzzed at all, or "".
    skipped: str = ""
    findings: dict[str, Finding] = field(default_factory=dict)
    codes: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)

    def facts(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "examples": self.examples,
            "seconds": round(self.seconds, 3),
            "per_second": round(self.examples / self.seconds, 1) if self.seconds > 0 else None,
            "hypothesis_seed": self.seed,
        }
        if self.stopped:
            out["stopped"] = self.stopped
        if self.skipped:
            out["skipped"] = self.skipped
        if self.codes:
            out["answers"] = dict(sorted(self.codes.items()))
        if self.notes:
            out["notes"] = self.notes
        return out


@dataclass
class Exploration:
    mode: str
    seed: int
    runs: list[ToolRun] = field(default_factory=list)
    replay: bool = False

    @property
    def examples(self) -> int:
        return sum(r.examples for r in self.runs)

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.runs)

    def facts(self) -> dict[str, Any]:
        rate = self.examples / self.seconds if self.seconds > 0 else None
        out: dict[str, Any] = {
            "mode": self.mode,
            "seed": self.seed,
            "examples": self.examples,
            "seconds": round(self.seconds, 3),
            "per_second": round(rate, 1) if rate is not None else None,
            "tools": {r.tool: r.facts() for r in self.runs},
        }
        if self.replay:
            out["replay"] = True
        return out


class LaneClosed(Exception):
    """No session can be had any more (the server cannot be re-opened, or broke too often)."""


class Lane:
    """The session the examples go over: the shared one first, then sessions of its own after a break.

    A break marks the shared session broken (the next check gets a restarted one) and closes it at once,
    so a hung server is not left running; later examples go over fresh sessions this lane closes.
    """

    def __init__(self, ctx: CaseContext) -> None:
        self.ctx = ctx
        self.current: Session | None = None
        self.shared = False
        self.left_shared = False
        self.restarts = 0
        self.closed_reason = ""
        self.own: list[Session] = []

    async def get(self) -> Session:
        if self.current is not None:
            return self.current
        if self.closed_reason:
            raise LaneClosed(self.closed_reason)
        if not self.left_shared:
            try:
                self.current, self.shared = await self.ctx.session(), True
                return self.current
            except TransportError:
                self.left_shared = True
        if self.restarts >= max(self.ctx.options.max_restarts, 1):
            self.closed_reason = f"the session broke {self.restarts} times"
            raise LaneClosed(self.closed_reason)
        self.restarts += 1
        try:
            session = await self.ctx.session_as()
        except (HandshakeFailed, TransportError) as exc:
            self.closed_reason = f"the server could not be re-opened: {exc}"
            raise LaneClosed(self.closed_reason) from None
        self.own.append(session)
        self.current, self.shared = session, False
        return session

    async def broke(self) -> None:
        session, self.current = self.current, None
        if session is None:
            return
        if self.shared:
            self.ctx.session_broken()
            self.left_shared = True
        with contextlib.suppress(Exception):
            await session.close()

    async def close(self) -> None:
        self.current = None
        for session in self.own:
            with contextlib.suppress(Exception):
                await session.close()
        self.own.clear()


def strip_echo(text: str, arguments: Any) -> str:
    """The text without the input's own strings: a server may quote what it was sent, which is no leak."""
    strings: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            strings.add(value)
        elif isinstance(value, dict):
            for key, sub in value.items():
                strings.add(str(key))
                walk(sub)
        elif isinstance(value, list):
            for sub in value:
                walk(sub)

    walk(arguments)
    for s in sorted(strings, key=len, reverse=True):
        if len(s) < 3:
            continue
        for form in (s, json.dumps(s, ensure_ascii=False)[1:-1], repr(s)[1:-1], json.dumps(s)[1:-1]):
            text = text.replace(form, "")
    return text


def judge(
    mode: str, call: Call, arguments: Any, mutation: Mutation | None
) -> tuple[list[tuple[str, str]], Any]:
    """The findings of one answered call (before the liveness ping), and how it was answered."""
    findings: list[tuple[str, str]] = []
    response = call.response
    error, result = call.error, call.result
    if not isinstance(response, dict) or ("result" in response) == ("error" in response):
        return [
            ("garbled", "the answer is not a JSON-RPC response with exactly one of result and error")
        ], None
    code: Any = "result" if isinstance(result, dict) and result.get("isError") is not True else "isError"
    if error is not None:
        code = call.error_code
        message = error.get("message") if isinstance(error, dict) else error
        if mode == "valid" and code == jsonrpc.INTERNAL_ERROR:
            findings.append(("internal-error", f"answered -32603 Internal error: {str(message)[:200]!r}"))
        if mode == "invalid" and code != jsonrpc.INVALID_PARAMS:
            findings.append(
                ("wrong-code", f"rejected with JSON-RPC code {code!r}, not -32602 or an isError result")
            )
    elif not isinstance(result, dict):
        return [("garbled", "the result is not an object")], None
    elif mode == "invalid" and result.get("isError") is not True:
        assert mutation is not None
        findings.append((f"accepted:{mutation.keyword}", f"accepted arguments that break {mutation.rule}"))
    for text in error_texts(call):
        trace = find_trace(strip_echo(text, arguments))
        if trace:
            findings.append(("trace", f"the error text carries {trace!r}"))
            break
    return findings, code


class ToolFuzzer:
    """One tool, one mode: the hypothesis property, its cache, bounds and findings."""

    def __init__(
        self,
        ctx: CaseContext,
        lane: Lane,
        tool: str,
        model: Model | None,
        run: ToolRun,
        deadline: float,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.ctx, self.lane, self.tool, self.model, self.run = ctx, lane, tool, model, run
        self.deadline = deadline
        self.loop = loop
        self.stop = threading.Event()
        self.cache: dict[str, Example] = {}
        self.breaks = 0
        self.harness_error: BaseException | None = None
        self.observed: dict[str, tuple[Example, int]] = {}
        self.raised: dict[str, Example] = {}
        #: Kinds shrunk in an earlier round: passed over, so the round looks for others.
        self.known: frozenset[str] = frozenset()
        self.max_examples = 0
        #: Whether this round found something new: its shrinking may send inputs past the budget.
        self.shrinking = False

    async def execute(self, arguments: dict[str, Any], mutation: Mutation | None) -> Example:
        """Send one input, then a ping: a finding for a hang, a crash, a bad answer or a server gone."""
        mark = self.ctx.mark()
        params = {"name": self.tool, "arguments": arguments}
        excerpt: dict[str, Any] = {"request": json.dumps({"method": "tools/call", "params": params})[:1500]}
        findings: list[tuple[str, str]] = []
        code: Any = None
        try:
            session = await self.lane.get()
        except LaneClosed as exc:
            return Example(arguments, mutation, excerpt, [], [("unavailable", str(exc))])
        timeout = self.ctx.options.timeout
        try:
            call = await session.request("tools/call", params)
        except NotSent as exc:  # tools/call hung twice in this revision already: this input was not sent
            return Example(arguments, mutation, excerpt, [], [("unavailable", str(exc))])
        except TransportTimeout as exc:
            findings.append(("hang", f"no answer within {timeout:g} s"))
            excerpt["diagnostics"] = exc.evidence
            await self._broke()
        except TransportError as exc:
            findings.append(("crash", f"the call broke the transport ({exc.kind}: {exc})"))
            excerpt["diagnostics"] = exc.evidence
            await self._broke()
        else:
            excerpt = dict(call.excerpt())
            findings, code = judge(self.run.mode, call, arguments, mutation)
            try:
                await session.request("ping")
            except TransportError as exc:
                findings.insert(0, ("dead", f"answered, then did not answer the next request ({exc.kind})"))
                excerpt["diagnostics"] = exc.evidence
                await self._broke()
        return Example(arguments, mutation, excerpt, self.ctx.wire_since(mark), findings, code)

    async def _broke(self) -> None:
        self.breaks += 1
        await self.lane.broke()

    def bound(self) -> str:
        """Why no further input may be sent, or ""."""
        if time.monotonic() >= self.deadline:
            return "the fuzz time budget ran out"
        if self.breaks >= BREAKS_PER_TOOL:
            return f"the tool broke the session {self.breaks} times"
        if self.lane.closed_reason:
            return self.lane.closed_reason
        return ""

    def prop(self, case: Any) -> None:
        """The hypothesis property (runs in the worker thread)."""
        if self.stop.is_set():
            return
        mutation = case if isinstance(case, Mutation) else None
        arguments = mutation.arguments if mutation is not None else case
        key = (
            json.dumps(arguments, sort_keys=True, ensure_ascii=False)
            + "|"
            + (mutation.keyword if mutation else "")
        )
        example = self.cache.get(key)
        if example is None:
            # Shrinking a finding found late may send up to as many inputs again as the budget.
            limit = self.max_examples * (2 if self.shrinking else 1)
            if self.run.examples >= limit:
                return  # the example budget is spent: later rounds only replay what is cached
            stop = self.bound()
            if stop:
                self.run.stopped = self.run.stopped or stop
                return
            # execute() is bounded by the request timeouts and the session's open and close bounds; this
            # outer bound only guards against a harness bug, and cancels the call if it ever trips.
            hard = 3 * self.ctx.options.timeout + 30
            future = asyncio.run_coroutine_threadsafe(self.execute(arguments, mutation), self.loop)
            try:
                example = future.result(timeout=hard)
            except Exception as exc:  # a harness failure: stop, and let the check show it as ERROR
                future.cancel()
                self.harness_error = exc
                self.stop.set()
                return
            if example.findings and example.findings[0][0] == "unavailable":
                self.run.stopped = self.run.stopped or example.findings[0][1]
                return
            self.cache[key] = example
            self.run.examples += 1
            if example.code is not None:
                self.run.codes[str(example.code)] += 1
            for kind, _ in example.findings:
                seen = self.observed.get(kind)
                if seen is None or example.size() < seen[0].size():
                    self.observed[kind] = (example, (seen[1] if seen else 0) + 1)
                else:
                    self.observed[kind] = (seen[0], seen[1] + 1)
        fresh = [(kind, message) for kind, message in example.findings if kind not in self.known]
        if fresh:
            kind, message = fresh[0]
            self.raised[kind] = example
            self.shrinking = True
            raise failure_type(kind)(message)

    def explore(self, strategy: Any, examples: int, seed: int) -> None:
        """Run the property under hypothesis in rounds (worker thread) until `examples` inputs are sent,
        a bound stops it, or a round sends nothing new; findings land in self.raised/observed."""
        self.max_examples = examples
        for number in range(MAX_ROUNDS):
            before = self.run.examples
            self.known, self.shrinking = frozenset(self.raised), False
            self._round(strategy, examples, (seed + number) % 2**32)
            if self.harness_error is not None or self.run.skipped or self.run.stopped:
                return
            if self.run.examples >= examples or self.run.examples == before:
                return

    def _round(self, strategy: Any, examples: int, seed: int) -> None:
        from hypothesis import HealthCheck, Phase, Verbosity, given, settings
        from hypothesis import seed as with_seed
        from hypothesis.errors import Unsatisfiable

        @settings(
            database=None,
            max_examples=examples,
            deadline=None,
            derandomize=False,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.generate, Phase.shrink],
            report_multiple_bugs=True,
            verbosity=Verbosity.quiet,
            print_blob=False,
        )
        @with_seed(seed)
        @given(strategy)
        def property_test(case: Any) -> None:
            self.prop(case)

        try:
            with hypothesis_home():
                property_test()
        except Unsatisfiable:
            if not self.run.examples:
                self.run.skipped = "hypothesis found no input to send (the schema's rules leave none)"
        except Exception as exc:
            # Findings were recorded by the property as it raised them; anything else hypothesis raises
            # (a strategy the converter built wrongly, say) is a harness bug and must show as ERROR.
            stray = [e for e in _leaves(exc) if not isinstance(e, FuzzFailure)]
            if stray and self.harness_error is None:
                self.harness_error = stray[0]

    def findings(self) -> dict[str, Finding]:
        out = {}
        for kind, (smallest, count) in self.observed.items():
            if kind in self.raised:
                example, shrunk = self.raised[kind], True
                message = next(m for k, m in example.findings if k == kind)
            else:  # seen only behind another finding of the same input, or past a bound: not shrunk
                example, shrunk = smallest, False
                message = next(m for k, m in smallest.findings if k == kind)
            out[kind] = Finding(kind, message, example, shrunk, count)
        return out


class Clock:
    """One budget for all fuzzing of a target (`--fuzz-budget`): each run gets an even share of what is
    left. The checks run `once`, so the target's fuzzing is that of one revision."""

    def __init__(self, budget: float, pending: int) -> None:
        self.deadline = time.monotonic() + budget
        self.pending = max(pending, 1)

    def share(self) -> float:
        now = time.monotonic()
        left = max(self.deadline - now, 0.0)
        return now + left / max(self.pending, 1)

    def done(self) -> None:
        self.pending = max(self.pending - 1, 1)


async def fuzz_tool(
    ctx: CaseContext,
    lane: Lane,
    tool: str,
    model: Model,
    mode: str,
    seed: int,
    deadline: float,
) -> ToolRun:
    """Explore one tool in one mode under hypothesis; return its run with the findings."""
    run = ToolRun(tool, mode, tool_seed(seed, mode, tool))
    if mode == "invalid" and not model.breakable():
        run.skipped = "the inputSchema has no rule an input could break"
        return run
    fuzzer = ToolFuzzer(ctx, lane, tool, model, run, deadline, asyncio.get_running_loop())
    strategy = model.valid() if mode == "valid" else model.invalid()
    started = time.monotonic()
    try:
        await asyncio.to_thread(fuzzer.explore, strategy, ctx.options.pack_option("fuzz_examples"), run.seed)
    finally:
        fuzzer.stop.set()
        run.seconds = time.monotonic() - started
    if fuzzer.harness_error is not None:
        raise fuzzer.harness_error
    run.findings = fuzzer.findings()
    return run


async def replay_one(
    ctx: CaseContext, lane: Lane, tool: str, mode: str, arguments: dict[str, Any], mutation: Mutation | None
) -> ToolRun:
    """Send exactly one recorded input (`--fuzz-replay`) and judge it as the exploration would."""
    run = ToolRun(tool, mode, 0)
    fuzzer = ToolFuzzer(ctx, lane, tool, None, run, time.monotonic() + 1e9, asyncio.get_running_loop())
    started = time.monotonic()
    example = await fuzzer.execute(arguments, mutation)
    run.seconds = time.monotonic() - started
    if example.findings and example.findings[0][0] == "unavailable":
        run.stopped = example.findings[0][1]
        return run
    run.examples = 1
    if example.code is not None:
        run.codes[str(example.code)] += 1
    for kind, message in example.findings:
        run.findings[kind] = Finding(kind, message, example, True, 1)
    return run


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]
