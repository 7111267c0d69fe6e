"""The input sweeps: each callable tool called by a client that declared input, and what it asked.

A server asks for input only while it handles a request, so the only way to see whether (and how) a
server asks is to call its tools as a client that declared the run's capabilities
(`--client-capabilities`, the target file's [client] table). Legacy revisions fix capabilities at
`initialize`, so the sweep opens a session of its own (another client than the shared session, which
declares nothing: a server may list other tools to it, and any ask on the shared session is undeclared);
2026-07-28 declares them per request in `_meta`, so it uses the shared session. Over stdio that session
of its own is opened with a ping written right after initialize (`declared_opening`), BASE-LIFE-010's
exchange, so one server process serves both instead of one each. In 2026-07-28 an
`InputRequiredResult` is fulfilled from the canned answers and retried, echoing `requestState`, for at
most MAX_ROUNDS rounds.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from conformance.pack_api import (
    CLIENT_INFO,
    DEFAULT_FEATURES,
    META_CLIENT_CAPABILITIES,
    NO_RESPONSE,
    Call,
    CaseContext,
    ClientInput,
    ServerAsk,
    Session,
    Skipped,
    TransportClosed,
    TransportError,
    TransportTimeout,
    capabilities_for,
    era_of,
    jsonrpc,
    parse_features,
    probe_grace,
)
from conformance_packs.base.common import SWEEP_TIMEOUTS, call_sweep, sized_first, tools
from conformance_packs.base.prompting import PromptGet, prompt_gets
from conformance_packs.base.wirelog import Seen, server_messages

#: Rounds of input_required -> retry before the sweep stops following one call.
MAX_ROUNDS = 3
#: Pages of tools/list the sweep reads as its own client (the shared listing judges pagination).
LIST_PAGES = 20
#: The inputResponses key no server asked for, sent along with the answers (BASE-INPUT-017).
EXTRA_KEY = "mcp-conformance-unasked"
#: The id of the ping written right after initialize (BASE-LIFE-010).
EARLY_PING_ID = "conformance-early-ping"
#: Round trips after the settling ping in which a reordered answer to the early ping may still arrive.
EXTRA_ROUND_TRIPS = 3


#: The retries sent once after a first InputRequiredResult with inputRequests, each with one thing wrong,
#: by the row that judges it: every requested key left out (BASE-INPUT-015), each answer a number instead
#: of a result object (BASE-INPUT-018), inputResponses null (BASE-INPUT-019), and the answers right but
#: requestState altered (BASE-INPUT-020, only where the server sent one).
PROBES = ("missing", "invalid", "null", "tampered")
#: What BASE-INPUT-018 sends for each requested key, and what BASE-INPUT-020 appends to requestState.
INVALID_ANSWER = 12345
TAMPER = "-tampered"


@dataclass
class Round:
    """One tools/call (or prompts/get) of the sweep: the request as sent and what came back."""

    tool: str
    call: Call
    retry: bool = False
    #: One of PROBES for a retry sent with one thing wrong; "" for the sweep's own calls and retries.
    probe: str = ""
    #: tools/call, or prompts/get (2026-07-28: each prompt the shared session got with a result).
    method: str = "tools/call"

    @property
    def missing(self) -> bool:
        """A retry whose inputResponses left out every requested key (BASE-INPUT-015)."""
        return self.probe == "missing"


@dataclass
class InputSweep:
    """What a client that declared `capabilities` saw when it called every callable tool."""

    features: frozenset[str]
    capabilities: dict[str, Any]
    asks: list[ServerAsk] = field(default_factory=list)
    rounds: list[Round] = field(default_factory=list)
    called: list[str] = field(default_factory=list)
    why: str = ""
    timeouts: list[str] = field(default_factory=list)

    def input_required(self) -> list[Round]:
        return [r for r in self.rounds if is_input_required(r.call.result)]

    def evidence(self) -> dict[str, Any]:
        return {
            "declared_capabilities": self.capabilities,
            "tools_called": self.called[:50],
            "asks": [
                {
                    "method": a.method,
                    "via": a.via,
                    "key": a.key,
                    **({"problem": a.problem} if a.problem else {}),
                }
                for a in self.asks[:50]
            ],
        }


def is_input_required(result: Any) -> bool:
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def run_features(ctx: CaseContext) -> frozenset[str]:
    """The run's declared input capabilities: the option, else the target file's [client] table, else
    the default (sampling, form elicitation, roots: modes and tools left undeclared, so a server that
    uses them regardless can be seen)."""
    given = ctx.options.pack_option("client_capabilities")
    if given is not None:
        return frozenset(given)
    table = ctx.target.settings.get("client")
    if isinstance(table, dict) and isinstance(table.get("capabilities"), list):
        return parse_features(",".join(table["capabilities"]) or "none")
    return DEFAULT_FEATURES


def canned_answers(ctx: CaseContext) -> dict[str, Any]:
    table = ctx.target.settings.get("client")
    answers = table.get("answers") if isinstance(table, dict) else None
    return dict(answers) if isinstance(answers, dict) else {}


def early_answers(entries: list[dict[str, Any]], ping_id: Any) -> list[Seen]:
    """The server's responses in `entries` to the request of id `ping_id`."""
    return [s for s in server_messages(entries) if s.kind == "response" and s.message.get("id") == ping_id]


@dataclass
class Opening:
    """The legacy declared-input client's session over stdio, opened with a ping written right after
    initialize, and what the server did with it (`liveness.ping_during_initialize` judges it).

    Why one opening for both: over stdio a session is a process, and an SDK server's start costs about
    a second. The early ping is a request the lifecycle lets a client send then, so a correct server's
    session is whole afterwards and the input sweep continues on it; a server that ended or fell silent
    (Rust rmcp exits) leaves the sweep to open another (`declared_session`).
    """

    session: Session
    init_id: int
    #: The report key of the case that opened it (the other case says it reads that one's exchange).
    case: str
    early: Call | None = None
    settle: Call | None = None
    ended: TransportError | None = None
    entries: list[dict[str, Any]] = field(default_factory=list)

    #: The server's answers to the opening's requests, by id, as `answer` found them.
    answers: dict[Any, dict[str, Any]] = field(default_factory=dict)

    def answer(self, msg_id: Any) -> dict[str, Any] | None:
        """The server's response to the request of id `msg_id`, when one came: read by id from every
        frame the session read (`Session.answer_to`), whichever wait or drain read it, so an answer that
        came between two waits is not lost, and not from the wire log, which a long run's transcript
        budget may have cut. Once found it is kept here: the session goes on to the input sweep."""
        if msg_id not in self.answers:
            frame = self.session.answer_to(msg_id)
            if frame is not None and isinstance(frame.value, dict):
                self.answers[msg_id] = frame.value
        return self.answers.get(msg_id)

    def whole(self, revision: str) -> bool:
        """Whether the handshake completed: initialize answered with a result that names `revision`
        (or no version, as `Session.open` takes it) and the server still answering."""
        if self.ended is not None or self.settle is None:
            return False
        answer = self.answer(self.init_id)
        result = answer.get("result") if answer is not None else None
        return isinstance(result, dict) and result.get("protocolVersion", revision) == revision


async def declared_opening(ctx: CaseContext) -> Opening:
    """Once per revision (legacy, stdio): a process started for the client that declared the run's
    input capabilities, opened with initialize and a ping written back to back, then initialized, then
    a ping every server answers (and up to EXTRA_ROUND_TRIPS more while the early ping's answer is
    still missing: SDK servers answer concurrently, so out of order)."""

    async def opening() -> Opening:
        features = run_features(ctx)
        client = ClientInput(capabilities_for(features, ctx.revision), canned_answers(ctx))
        session = await ctx.fresh_session_unopened()
        session.client = client
        session.adapter.answer_request = client.answer_frame
        budget = session.opening_timeout or session.timeout  # a process started just now: its start budget
        out = Opening(session, session.next_id(), ctx.case_key)
        params = {
            "protocolVersion": ctx.revision,
            "capabilities": client.capabilities,
            "clientInfo": CLIENT_INFO,
        }
        mark = ctx.mark()
        # Written back to back, before the initialize answer is read: a server answering in order has
        # answered the early ping by the time the later one is answered, so nothing is waited out.
        await session.send(jsonrpc.request(out.init_id, "initialize", params), expect_id=NO_RESPONSE)
        out.early = await session.send(jsonrpc.request(EARLY_PING_ID, "ping"), expect_id=NO_RESPONSE)
        await session.notify("notifications/initialized")
        session.unawaited(out.init_id, EARLY_PING_ID)  # each later ping gets its own answer
        try:
            out.settle = await session.request("ping", timeout=budget)
            for _ in range(EXTRA_ROUND_TRIPS):
                if out.answer(EARLY_PING_ID) is not None:
                    break
                await session.request("ping", timeout=budget)
        except (TransportClosed, TransportTimeout) as exc:
            out.ended = exc  # the server exited or fell silent: what it did is the evidence
        settle = out.settle.request if out.settle is not None else None
        for msg_id in (out.init_id, EARLY_PING_ID, *([settle["id"]] if settle else [])):
            out.answer(msg_id)  # kept now: the sweep's answers may push them out of the session's later
        out.entries = ctx.wire_since(mark)
        return out

    owner = "opening a session with a ping during initialize"
    return await ctx.remember_once("declared-opening", owner, opening)


async def declared_session(ctx: CaseContext, client: ClientInput) -> tuple[Session, ClientInput]:
    """The legacy input sweep's session and its client: over stdio the declared opening's process when
    its handshake completed, else (HTTP, or a server the early ping broke) a session opened now."""
    if ctx.target.kind == "stdio":
        opening = await declared_opening(ctx)
        if opening.whole(ctx.revision):
            # Idle since its opening (BASE-LIFE-010's case, earlier): what the server asked meanwhile
            # (server-everything's roots/list) is answered now, as a client that declared it would.
            await opening.session.answer_waiting()
            return opening.session, opening.session.client
    session = await ctx.fresh_session_unopened()
    session.client = client
    session.adapter.answer_request = client.answer_frame
    await session.open()
    return session, client


async def input_sweep(ctx: CaseContext) -> InputSweep:
    """Call each callable tool once as a client declaring the run's capabilities (once per revision)."""

    async def sweep() -> InputSweep:
        from conformance.pack_api import candidates

        features = run_features(ctx)
        caps = capabilities_for(features, ctx.revision)
        out = InputSweep(features, caps)
        client = ClientInput(caps, canned_answers(ctx), modern=era_of(ctx.revision) == "modern")
        if client.modern:
            session = await ctx.session()
        else:
            session, client = await declared_session(ctx, client)
        # A server may offer some tools only to a client that declared input (server-everything's
        # sampling and elicitation tools): list them as this client, falling back to the shared listing.
        started = time.monotonic()
        listed = await _list_tools(session, client) or await tools(ctx)
        round_trip = time.monotonic() - started
        # A tool that outlasted the timeout in the tools sweep is not called again: each hang counts
        # against the revision's bound on hung requests (`HangWatch`), and would stop this sweep.
        slow = {t.name for t in (await call_sweep(ctx)).tools if t.timed_out}
        chosen = [t for t in ctx.callable_tools(listed) if t["name"] not in slow]
        if not chosen:
            out.why = "no callable tool"
            return out
        built = await asyncio.to_thread(lambda: [candidates(t.get("inputSchema", {})) for t in chosen])
        adapter = None if client.modern else await ctx.http_adapter(session)
        async with _get_stream(adapter, ctx.options.timeout, probe_grace(round_trip)):
            await _call_each(session, client, out, chosen, built)
        if client.modern and not out.why and ctx.identity.has("prompts"):
            with contextlib.suppress(Skipped):  # no prompt listed: the tools alone were swept
                await _get_each(session, client, out, await prompt_gets(ctx))
        out.asks = client.asks
        return out

    return await ctx.remember_once(
        "input-sweep", "calling each callable tool as a client that declared input", sweep
    )


@contextlib.asynccontextmanager
async def _get_stream(adapter: Any, timeout: float, grace: float) -> AsyncIterator[None]:
    """Over Streamable HTTP (legacy revisions), a GET stream held open beside the sweep's calls, where
    its requests are answered (`HttpAdapter.listen`).

    Why: a server may ask for input unrelated to the call it handles (server-everything's roots/list,
    sent without a related request id): the transport puts such a request on the GET stream, and with
    none open it is lost and the call waits on it, out to the whole timeout. The GET is opened beside
    the calls, never waited for past `grace` (a round trip's scale): a server whose GET never answers
    costs no wait here (BASE-HTTP-002 judges that), and a GET refused (405) changes nothing."""
    if adapter is None:
        yield
        return
    opened, done = asyncio.Event(), asyncio.Event()
    held: list[Any] = []

    async def hold() -> None:
        with contextlib.suppress(TransportError):
            async with adapter.listen(timeout=timeout, answer=True) as listening:
                held.append(listening)
                opened.set()
                await done.wait()

    task = asyncio.get_running_loop().create_task(hold())
    waiter = asyncio.get_running_loop().create_task(opened.wait())
    try:
        await asyncio.wait({task, waiter}, timeout=grace, return_when=asyncio.FIRST_COMPLETED)
        yield
        if held and any(e.frame is not None and e.frame.kind == "request" for e in held[0].events):
            # The server used the stream: what it sends after our answer (a log line) is on its way.
            await held[0].wait_for(lambda events: False, grace)
    finally:
        done.set()
        for pending in (waiter, task):
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending


async def _call_each(
    session: Session, client: ClientInput, out: InputSweep, chosen: list[dict[str, Any]], built: list[Any]
) -> None:
    """Each chosen tool called once with its first candidate (sized, `sized_first`), up to
    SWEEP_TIMEOUTS calls unanswered within the timeout."""
    for tool, cands in zip(chosen, built, strict=True):
        if not cands.arguments:
            continue
        # Sized like the tools sweep's first call: a tool that sleeps answers soon (`sized_first`).
        sized = sized_first(tool, cands.arguments[0])
        args = sized.arguments if sized is not None else next(iter(cands.values()))
        out.called.append(str(tool["name"]))
        try:
            await _call(session, client, out, str(tool["name"]), args)
        except TransportTimeout as exc:
            # A slow tool breaks no rule (server-everything's long-running one): the others are
            # still called, up to SWEEP_TIMEOUTS of them, as in the tools sweep.
            out.timeouts.append(f"{tool['name']!r}: {exc}")
            if len(out.timeouts) >= SWEEP_TIMEOUTS:
                out.why = "; ".join(out.timeouts)
                break
        except TransportError as exc:
            out.why = f"{tool['name']!r}: {exc}"
            break


async def _get_each(session: Session, client: ClientInput, out: InputSweep, gets: list[PromptGet]) -> None:
    """2026-07-28: each prompt the shared session (which declares nothing) got with a result, got again
    with the same arguments as the client that declared input, and followed through (a prompts/get may
    ask for input as a tools/call may). A transport failure ends the prompts, not the sweep."""
    done: set[str] = set()
    for got in gets:
        if got.result() is None or got.name in done:
            continue
        done.add(got.name)
        try:
            await _call(session, client, out, got.name, got.arguments, "prompts/get")
        except TransportError as exc:
            out.timeouts.append(f"prompt {got.name!r}: {exc}")
            return


async def _list_tools(session: Session, client: ClientInput) -> list[dict[str, Any]]:
    """tools/list as this client sees it, to the end or LIST_PAGES pages; [] when it cannot be read."""
    out: list[dict[str, Any]] = []
    cursor: Any = None
    seen: set[str] = set()
    for _ in range(LIST_PAGES):
        params: dict[str, Any] = {} if cursor is None else {"cursor": cursor}
        if client.modern:
            params["_meta"] = {META_CLIENT_CAPABILITIES: client.capabilities}
        result = (await session.request("tools/list", params)).result
        if not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            return []
        out += [t for t in result["tools"] if isinstance(t, dict) and isinstance(t.get("name"), str)]
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or cursor in seen:
            break
        seen.add(cursor)
    return out


async def _call(
    session: Session, client: ClientInput, out: InputSweep, name: str, args: Any, method: str = "tools/call"
) -> None:
    """`method` (tools/call, or prompts/get) of `name` with `args`, followed through its input-required
    rounds in 2026-07-28: each fulfilled and retried, the first also probed (`_probes`)."""
    params: dict[str, Any] = {"name": name, "arguments": args}
    if client.modern:
        params["_meta"] = {META_CLIENT_CAPABILITIES: client.capabilities}
    call = await session.request(method, params)
    out.rounds.append(Round(name, call, method=method))
    for index in range(MAX_ROUNDS if client.modern else 0):
        result = call.result
        if not is_input_required(result):
            return
        requests, state = result.get("inputRequests"), result.get("requestState")
        if not isinstance(requests, dict) and not isinstance(state, str):
            return  # nothing to fulfil or echo: a retry would be the same request again
        retry = dict(params)
        if isinstance(result.get("requestState"), str):
            retry["requestState"] = result["requestState"]
        if isinstance(requests, dict):
            answers = client.fulfil(requests)
            if index == 0 and requests:
                for probe, changed in _probes(answers, requests, state).items():
                    sent = await session.request(method, {**retry, **changed})
                    out.rounds.append(Round(name, sent, retry=True, probe=probe, method=method))
            # An unasked key rides along: the server should ignore what it does not need.
            retry["inputResponses"] = {**answers, EXTRA_KEY: {"action": "cancel"}}
        call = await session.request(method, retry)
        out.rounds.append(Round(name, call, retry=True, method=method))


def _probes(answers: dict[str, Any], requests: dict[str, Any], state: Any) -> dict[str, dict[str, Any]]:
    """The parameters each of PROBES changes in the retry: the same retry without the input asked for
    (the server should ask again, not fail), answers that are no result objects and inputResponses null
    (it should refuse them, not complete), and the right answers with requestState altered (it must not
    complete on state that fails its verification, where the state carries anything that matters)."""
    probes: dict[str, dict[str, Any]] = {
        "missing": {"inputResponses": {}},
        "invalid": {"inputResponses": dict.fromkeys(requests, INVALID_ANSWER)},
        "null": {"inputResponses": None},
    }
    if isinstance(state, str):
        probes["tampered"] = {"inputResponses": answers, "requestState": state + TAMPER}
    return probes
