"""Input the server needs from the client: legacy sampling, elicitation and roots requests, and the
2026-07-28 input-required results (multi round-trip requests).

The harness is a client whose capabilities are set per run (`input_sweep.run_features`). The shared
session declares nothing, so any ask on it is undeclared; the input sweep declares the run's
capabilities and calls every callable tool, answering each declared ask from the canned answers
(`conformance.protocol.client_input`). A check that saw no ask of its kind SKIPs saying so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from conformance.pack_api import (
    ELICITATION,
    FIRST_INPUT_MODES,
    INPUT_METHODS,
    MODERN_REVISIONS,
    SAMPLING,
    CaseContext,
    ServerAsk,
    at_least,
    check,
    missed,
    skip,
    weak,
)
from conformance_packs.base.common import Sources, answered_calls, no_callable_reason, skip_tools_held_back
from conformance_packs.base.input_sweep import (
    EXTRA_KEY,
    INVALID_ANSWER,
    MAX_ROUNDS,
    TAMPER,
    InputSweep,
    Round,
    input_sweep,
    is_input_required,
)
from conformance_packs.base.prompting import shape_errors
from conformance_packs.base.wirelog import read_log

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
ELICITING = ("2025-06-18", "2025-11-25", "2026-07-28")
MODES = ("2025-11-25", "2026-07-28")
MRTR_METHODS = ("tools/call", "prompts/get", "resources/read")
URL_ELICITATION_REQUIRED = -32042


async def _sweep(ctx: CaseContext) -> InputSweep:
    sweep = await input_sweep(ctx)
    if not sweep.called:
        reason = f"no tool to call as a client that declared input: {sweep.why or no_callable_reason(ctx)}"
        skip_tools_held_back(ctx, reason, None)
    return sweep


async def _declared_calls(ctx: CaseContext) -> list[Round]:
    """The input sweep's calls, as a source of `Sources` (or its SKIP's reason)."""
    return (await _sweep(ctx)).rounds


async def _declared_sweeps(ctx: CaseContext, sources: Sources) -> list[InputSweep]:
    """The input sweep, when it called a tool, taken as one of `sources` (its calls counted there)."""
    await sources.take("calls declaring input", _declared_calls(ctx))
    sweep = await input_sweep(ctx)  # once per revision: the sweep taken above
    return [sweep] if sweep.called else []


def _caps(capabilities: dict[str, Any]) -> str:
    """Declared client capabilities as JSON text (never a Python dict's repr)."""
    return json.dumps(capabilities, sort_keys=True)


def _asks(sweep: InputSweep, method: str | None = None) -> list[ServerAsk]:
    return [a for a in sweep.asks if method is None or a.method == method]


def _show(ask: ServerAsk) -> str:
    where = f"inputRequests[{ask.key!r}]" if ask.via == "inputRequests" else f"request id {ask.key!r}"
    return f"{ask.method} ({where})"


# --- what may be asked at all -------------------------------------------------------------------


@check(
    "base.input.declared-only",
    "BASE-INPUT-001",
    "the server asks only for input the client declared",
    revisions=LEGACY,
)
async def declared_only(ctx: CaseContext) -> None:
    # Two sources, taken apart: one that called nothing leaves the other's calls judged.
    sources = Sources()
    await sources.take("calls declaring no capability", answered_calls(ctx))
    swept = await _declared_sweeps(ctx, sources)
    sources.require("no tool was called")
    session = await ctx.session()
    undeclared_asks = [a for a in session.client.asks if a.method in INPUT_METHODS]
    asks = len(session.client.asks)
    for declared in swept:
        undeclared_asks += [
            a
            for a in declared.asks
            if a.problem and "did not declare" in a.problem and "sampling.tools" not in a.problem
        ]
        asks += len(declared.asks)
    said = f" (declared: {_caps(swept[0].capabilities)})" if swept else ""
    ctx.note(f"answered or refused calls, by source: {sources.line()}{said}; {asks} ask(s) seen")
    if undeclared_asks:
        missed(
            "the server asked for input the client did not declare: "
            + "; ".join(f"{_show(a)}: {a.problem}" for a in undeclared_asks[:5]),
            asks=[a.raw for a in undeclared_asks[:5]],
        )


@check(
    "base.input.elicitation-modes",
    "BASE-INPUT-002",
    "no elicitation in a mode the client did not declare",
    revisions=MODES,
)
async def elicitation_modes(ctx: CaseContext) -> None:
    sweep = await _sweep(ctx)
    declared = sweep.capabilities.get("elicitation")
    if not isinstance(declared, dict):
        skip("the run declares no elicitation (--client-capabilities), so no mode can be judged")
    if {"form", "url"} <= set(declared):
        skip("the run declares both elicitation modes, so no mode is undeclared")
    wrong = [a for a in _asks(sweep, ELICITATION) if "in mode" in a.problem]
    ctx.note(
        f"declared elicitation {_caps(declared)}; {len(_asks(sweep, ELICITATION))} elicitation ask(s) seen"
    )
    if wrong:
        missed("; ".join(f"{_show(a)}: {a.problem}" for a in wrong[:5]), **sweep.evidence())


@check(
    "base.input.sampling-tools",
    "BASE-INPUT-003",
    "no tool-enabled sampling unless the client declared sampling.tools",
    revisions=MODES,
)
async def sampling_tools(ctx: CaseContext) -> None:
    sweep = await _sweep(ctx)
    sampling = sweep.capabilities.get("sampling")
    if not isinstance(sampling, dict):
        skip("the run declares no sampling (--client-capabilities)")
    if isinstance(sampling.get("tools"), dict):
        skip("the run declares sampling.tools, so tool-enabled sampling is allowed")
    wrong = [a for a in _asks(sweep, SAMPLING) if "sampling.tools" in a.problem]
    ctx.note(f"{len(_asks(sweep, SAMPLING))} sampling ask(s) seen")
    if wrong:
        missed("; ".join(f"{_show(a)}: {a.problem}" for a in wrong[:5]), **sweep.evidence())


# --- the shape of each ask ------------------------------------------------------------------------


def elicitation_problems(params: Any, revision: str) -> list[str]:
    """What an elicitation/create request's params lack (its revision's text and schema)."""
    if not isinstance(params, dict):
        return ["params is not an object"]
    out = [] if isinstance(params.get("message"), str) else ["message is not a string"]
    mode = params.get("mode", "form")
    if at_least(revision, FIRST_INPUT_MODES) and mode not in ("form", "url"):
        out.append(f"mode {mode!r} is neither 'form' nor 'url'")
    elif mode == "url" and at_least(revision, FIRST_INPUT_MODES):
        for key in ("url", "elicitationId"):
            if not isinstance(params.get(key), str):
                out.append(f"URL mode without a string {key}")
        url = params.get("url")
        if isinstance(url, str) and not (urlsplit(url).scheme and urlsplit(url).netloc):
            out.append(f"url {url[:200]!r} is not a valid URL")
    else:
        schema = params.get("requestedSchema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            out.append('form mode without a requestedSchema of type "object"')
    return out


def sampling_problems(params: Any, revision: str) -> list[str]:
    """What a sampling/createMessage request's params lack (schema: messages and maxTokens required)."""
    if not isinstance(params, dict):
        return ["params is not an object"]
    out: list[str] = []
    if not isinstance(params.get("maxTokens"), int) or isinstance(params.get("maxTokens"), bool):
        out.append("maxTokens is not an integer")
    messages = params.get("messages")
    if not isinstance(messages, list):
        return [*out, "messages is not an array"]
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            out.append(f"messages[{index}] has no role 'user' or 'assistant'")
            continue
        content = message.get("content")
        blocks = content if isinstance(content, list) and at_least(revision, FIRST_INPUT_MODES) else [content]
        if not blocks or not all(isinstance(b, dict) and isinstance(b.get("type"), str) for b in blocks):
            out.append(f"messages[{index}].content is not a content block with a type")
    return out


def mixed_tool_results(params: Any) -> list[str]:
    """User messages that mix tool results with other content (2025-11-25 on: "MUST contain ONLY")."""
    messages = params.get("messages") if isinstance(params, dict) else None
    out = []
    for index, message in enumerate(messages if isinstance(messages, list) else []):
        content = message.get("content") if isinstance(message, dict) else None
        blocks = content if isinstance(content, list) else [content]
        kinds = {b.get("type") for b in blocks if isinstance(b, dict)}
        if "tool_result" in kinds and kinds != {"tool_result"}:
            others = sorted(str(k) for k in kinds if k != "tool_result")
            out.append(f"messages[{index}] mixes tool_result with {others}")
    return out


def _shape_check(ctx: CaseContext, sweep: InputSweep, method: str, judge: Any, what: str) -> None:
    asks = [a for a in _asks(sweep, method) if not a.problem]
    if not asks:
        declared = _caps(sweep.capabilities)
        skip(f"no tool asked for {what} (declared {declared}; called {len(sweep.called)} tool(s))")
    bad = [(a, judge(a.params, ctx.revision)) for a in asks]
    bad = [(a, p) for a, p in bad if p]
    ctx.note(f"{len(asks)} {method} ask(s) judged")
    if bad:
        missed(
            "; ".join(f"{_show(a)}: {', '.join(p)}" for a, p in bad[:5]),
            asks=[json.dumps(a.params)[:1500] for a, _ in bad[:3]],
        )


@check(
    "base.input.elicitation-shape",
    "BASE-INPUT-005",
    "an elicitation request carries what its mode requires",
    revisions=ELICITING,
)
async def elicitation_shape(ctx: CaseContext) -> None:
    _shape_check(ctx, await _sweep(ctx), ELICITATION, elicitation_problems, "elicitation")


@check(
    "base.input.sampling-shape",
    "BASE-INPUT-007",
    "a sampling request carries messages with roles and maxTokens",
)
async def sampling_shape(ctx: CaseContext) -> None:
    _shape_check(ctx, await _sweep(ctx), SAMPLING, sampling_problems, "sampling")


@check(
    "base.input.sampling-tool-results",
    "BASE-INPUT-009",
    "a sampling message with tool results holds only tool results",
    revisions=MODES,
)
async def sampling_tool_results(ctx: CaseContext) -> None:
    sweep = await _sweep(ctx)
    asks = [a for a in _asks(sweep, SAMPLING) if not a.problem]
    if not any("tool_result" in json.dumps(a.params) for a in asks):
        skip(f"no sampling ask carried a tool result ({len(asks)} sampling ask(s) seen)")
    bad = [(a, mixed_tool_results(a.params)) for a in asks]
    bad = [(a, p) for a, p in bad if p]
    if bad:
        missed("; ".join(f"{_show(a)}: {', '.join(p)}" for a, p in bad[:5]))


@check(
    "base.input.sampling-include-context",
    "BASE-INPUT-008",
    "no includeContext thisServer/allServers unless sampling.context is declared",
    revisions=MODES,
)
async def sampling_include_context(ctx: CaseContext) -> None:
    sweep = await _sweep(ctx)
    sampling = sweep.capabilities.get("sampling")
    if not isinstance(sampling, dict):
        skip("the run declares no sampling (--client-capabilities)")
    asks = [a for a in _asks(sweep, SAMPLING) if not a.problem]
    if not asks:
        skip(f"no tool asked for sampling (called {len(sweep.called)} tool(s))")
    wide = [
        a
        for a in asks
        if isinstance(a.params, dict) and a.params.get("includeContext") in ("thisServer", "allServers")
    ]
    if wide and not isinstance(sampling.get("context"), dict):
        missed(
            "; ".join(f"{_show(a)}: includeContext {a.params['includeContext']!r}" for a in wide[:5])
            + " although the client did not declare sampling.context"
        )


@check(
    "base.input.url-elicitation-error",
    "BASE-INPUT-016",
    "a URLElicitationRequiredError lists URL-mode elicitations with an elicitationId",
    revisions=("2025-11-25",),
)
async def url_elicitation_error(ctx: CaseContext) -> None:
    errors = [
        m
        for m in _received(ctx)
        if isinstance(m.get("error"), dict) and m["error"].get("code") == URL_ELICITATION_REQUIRED
    ]
    if not errors:
        skip("no answer of this revision was a URLElicitationRequiredError (-32042)")
    for message in errors:
        data = message["error"].get("data")
        listed = data.get("elicitations") if isinstance(data, dict) else None
        if not isinstance(listed, list) or not listed:
            missed("a -32042 error carries no data.elicitations list", error=message["error"])
        for item in listed:
            if (
                not isinstance(item, dict)
                or item.get("mode") != "url"
                or not isinstance(item.get("elicitationId"), str)
            ):
                missed(
                    "an elicitation in a -32042 error is not URL mode with an elicitationId",
                    error=message["error"],
                )


# --- 2026-07-28: input-required results -----------------------------------------------------------


def _received(ctx: CaseContext) -> Iterator[dict[str, Any]]:
    """Every JSON-RPC message object the server sent in this revision's wire log (SSE events, bodies,
    stdout), as `wirelog.read_log` parsed it once for every check that reads the whole log."""
    _, seen = read_log(ctx)
    for item in seen:
        message = item.message
        if isinstance(message, dict):
            yield message


async def _mrtr(ctx: CaseContext) -> InputSweep:
    sweep = await _sweep(ctx)
    if not sweep.input_required():
        skip(
            f"no tool answered with an InputRequiredResult (declared {_caps(sweep.capabilities)}; "
            f"called {len(sweep.called)} tool(s))"
        )
    return sweep


@check(
    "base.input.mrtr-shape",
    "BASE-INPUT-010",
    "an InputRequiredResult carries inputRequests or requestState",
    revisions=MODERN_REVISIONS,
)
async def mrtr_shape(ctx: CaseContext) -> None:
    sweep = await _mrtr(ctx)
    for rnd in sweep.input_required():
        result = rnd.call.result
        requests, state = result.get("inputRequests"), result.get("requestState")
        if requests is None and state is None:
            missed(
                f"{rnd.tool!r}: an InputRequiredResult with neither inputRequests nor requestState",
                **rnd.call.excerpt(),
            )
        if requests is not None and not isinstance(requests, dict):
            missed(f"{rnd.tool!r}: inputRequests is not an object", **rnd.call.excerpt())
        if state is not None and not isinstance(state, str):
            missed(f"{rnd.tool!r}: requestState is not a string", **rnd.call.excerpt())


@check(
    "base.input.mrtr-declared",
    "BASE-INPUT-011",
    "inputRequests ask only for what the client declared",
    revisions=MODERN_REVISIONS,
)
async def mrtr_declared(ctx: CaseContext) -> None:
    # Two sources, taken apart: one that called nothing leaves the other's calls judged.
    sources = Sources()
    plain = await sources.take("calls declaring no capability", answered_calls(ctx))
    swept = await _declared_sweeps(ctx, sources)
    sources.require("no tool was called")
    undeclared = [
        (call.request["params"]["name"] if call.request else "?", key)
        for call in plain
        if is_input_required(call.result) and isinstance(call.result.get("inputRequests"), dict)
        for key in call.result["inputRequests"]
    ]
    wrong = [
        a
        for sweep in swept
        for a in sweep.asks
        if a.via == "inputRequests" and a.problem and a.method in INPUT_METHODS
    ]
    said = f" (declared: {_caps(swept[0].capabilities)})" if swept else ""
    required = sum(len(sweep.input_required()) for sweep in swept)
    ctx.note(f"calls by source: {sources.line()}{said}; {required} InputRequiredResult(s)")
    if undeclared:
        missed(
            "inputRequests to a client that declared no capability: "
            + ", ".join(f"{name!r}: {key!r}" for name, key in undeclared[:5])
        )
    if wrong:
        missed("; ".join(f"{_show(a)}: {a.problem}" for a in wrong[:5]), **swept[0].evidence())


@check(
    "base.input.mrtr-request-kinds",
    "BASE-INPUT-012",
    "each inputRequests value is an elicitation, sampling or roots request",
    revisions=MODERN_REVISIONS,
)
async def mrtr_request_kinds(ctx: CaseContext) -> None:
    sweep = await _mrtr(ctx)
    asks = [a for a in sweep.asks if a.via == "inputRequests"]
    if not asks:
        skip("no InputRequiredResult carried inputRequests")
    problems = []
    for ask in asks:
        if ask.method not in INPUT_METHODS:
            problems.append(f"{_show(ask)}: not elicitation/create, sampling/createMessage or roots/list")
        elif ask.method == ELICITATION:
            problems += [f"{_show(ask)}: {p}" for p in elicitation_problems(ask.params, ctx.revision)]
        elif ask.method == SAMPLING:
            problems += [f"{_show(ask)}: {p}" for p in sampling_problems(ask.params, ctx.revision)]
    ctx.note(f"{len(asks)} inputRequests entr(y/ies) judged")
    if problems:
        missed("; ".join(problems[:5]), **sweep.evidence())


@check(
    "base.input.mrtr-methods",
    "BASE-INPUT-013",
    "InputRequiredResult only answers tools/call, prompts/get or resources/read",
    revisions=MODERN_REVISIONS,
)
async def mrtr_methods(ctx: CaseContext) -> None:
    await input_sweep(ctx)
    # Each response is matched to the method of the request it answers by `wirelog` (None where two
    # requests with its id were pending: those are not judged here).
    _, seen = read_log(ctx)
    if not seen:
        skip("nothing was received in this revision")
    answers = [
        (item.method, item.message)
        for item in seen
        if item.kind == "response" and is_input_required(item.message.get("result"))
    ]
    wrong = [(method, m) for method, m in answers if method is not None and method not in MRTR_METHODS]
    ctx.note(f"{len(answers)} InputRequiredResult(s) in this revision's wire log")
    if wrong:
        missed(
            "an InputRequiredResult answered " + ", ".join(sorted({str(method) for method, _ in wrong})),
            response=json.dumps(wrong[0][1])[:1500],
        )


@check(
    "base.input.no-server-requests",
    "BASE-INPUT-014",
    "no JSON-RPC request for input from the server (2026-07-28 uses input-required results)",
    revisions=MODERN_REVISIONS,
)
async def no_server_requests(ctx: CaseContext) -> None:
    await input_sweep(ctx)
    requests = [m for m in _received(ctx) if isinstance(m.get("method"), str) and "id" in m]
    asks = [m for m in requests if m["method"] in INPUT_METHODS]
    if asks:
        missed(
            "the server sent JSON-RPC requests for input: " + ", ".join(sorted({m["method"] for m in asks})),
            request=json.dumps(asks[0])[:1500],
        )


@check(
    "base.input.mrtr-missing-input",
    "BASE-INPUT-015",
    "a retry without the requested input is asked again, not refused with an error",
    revisions=MODERN_REVISIONS,
)
async def mrtr_missing_input(ctx: CaseContext) -> None:
    sweep = await _mrtr(ctx)
    bare = [r for r in sweep.rounds if r.missing]
    if not bare:
        skip("no InputRequiredResult carried inputRequests to leave unanswered")
    errors = [r for r in bare if r.call.error is not None]
    ctx.note(f"{len(bare)} retr(y/ies) with empty inputResponses and the echoed requestState")
    if errors:
        missed(
            f"{errors[0].tool!r}: a retry without the requested input was answered with an error, "
            "not a new InputRequiredResult",
            **errors[0].call.excerpt(),
        )


@check(
    "base.input.mrtr-extra-responses",
    "BASE-INPUT-017",
    "an unrequested inputResponses entry is ignored",
    revisions=MODERN_REVISIONS,
)
async def mrtr_extra_responses(ctx: CaseContext) -> None:
    sweep = await _mrtr(ctx)
    retries = [r for r in sweep.rounds if r.retry and not r.probe]
    if not retries:
        skip("no InputRequiredResult carried inputRequests to answer")
    errors = [r for r in retries if r.call.error is not None or not isinstance(r.call.result, dict)]
    ctx.note(
        f"{len(retries)} retr(y/ies) with every requested input, one unrequested key "
        f"({EXTRA_KEY!r}) and the echoed requestState"
    )
    if errors:
        missed(
            f"{errors[0].tool!r}: the fulfilled retry carrying one unrequested key "
            "was answered with an error",
            **errors[0].call.excerpt(),
        )


async def _probed(ctx: CaseContext, probe: str, none: str) -> list[Round]:
    """The input sweep's retries sent with `probe`'s one thing wrong (`input_sweep.PROBES`); SKIP with
    `none` when the sweep sent none."""
    sweep = await _mrtr(ctx)
    rounds = [r for r in sweep.rounds if r.probe == probe]
    if not rounds:
        skip(none)
    return rounds


def _completed(rounds: list[Round]) -> list[Round]:
    """The retries answered with a result that is no InputRequiredResult: the call went through."""
    return [r for r in rounds if isinstance(r.call.result, dict) and not is_input_required(r.call.result)]


@check(
    "base.input.mrtr-invalid-responses",
    "BASE-INPUT-018",
    "inputResponses that are no result objects are not taken",
    revisions=MODERN_REVISIONS,
)
async def mrtr_invalid_responses(ctx: CaseContext) -> None:
    await _refused_probe(
        ctx,
        "invalid",
        f"answering each requested key with {INVALID_ANSWER}",
        f"a retry answering each requested key with {INVALID_ANSWER} (no result object) completed the "
        "call, neither refused nor asked again",
    )


@check(
    "base.input.mrtr-null-responses",
    "BASE-INPUT-019",
    "inputResponses null is not taken",
    revisions=MODERN_REVISIONS,
)
async def mrtr_null_responses(ctx: CaseContext) -> None:
    await _refused_probe(
        ctx,
        "null",
        "with inputResponses null",
        "a retry with inputResponses null (not an object) completed the call, not refused with an error",
    )


async def _refused_probe(ctx: CaseContext, probe: str, sent: str, completed: str) -> None:
    """A retry of `probe` (one thing wrong) must not complete the call: a miss naming the first that did."""
    rounds = await _probed(ctx, probe, "no InputRequiredResult carried inputRequests to answer")
    ctx.note(f"{len(rounds)} retr(y/ies) {sent}")
    done = _completed(rounds)
    if done:
        missed(f"{done[0].tool!r}: {completed}", **done[0].call.excerpt())


@check(
    "base.input.mrtr-tampered-state",
    "BASE-INPUT-020",
    "a retry with an altered requestState does not complete",
    revisions=MODERN_REVISIONS,
)
async def mrtr_tampered_state(ctx: CaseContext) -> None:
    """The MUST binds where the state influences authorization, resource access or business logic, and
    lets a server leave it unprotected where tampering can do nothing worse than fail the request: which
    holds the harness cannot see, so a call completed on the altered state is a WARN saying so."""
    rounds = await _probed(
        ctx, "tampered", "no InputRequiredResult carried both inputRequests and requestState"
    )
    ctx.note(f"{len(rounds)} retr(y/ies) with every requested input and {TAMPER!r} appended to requestState")
    done = _completed(rounds)
    if done:
        weak(
            f"{done[0].tool!r}: a retry whose requestState was altered (suffix {TAMPER!r}) completed the "
            "call: the state was not verified, which the text requires where it influences authorization, "
            "resource access or business logic (the harness cannot see whether it does)",
            **done[0].call.excerpt(),
        )


@check(
    "base.input.mrtr-prompt-complete",
    "BASE-INPUT-021",
    "a prompts/get retried with the input it asked for completes with a GetPromptResult",
    revisions=MODERN_REVISIONS,
)
async def mrtr_prompt_complete(ctx: CaseContext) -> None:
    """Each prompt that asked the declared client for input, followed to its last fulfilled retry: the
    flow ends with the final result, though no keyword makes it (hence `implied`)."""
    sweep = await _sweep(ctx)
    gets = [r for r in sweep.rounds if r.method == "prompts/get" and not r.probe]
    asked = [r for r in gets if not r.retry and is_input_required(r.call.result)]
    if not asked:
        got = len({r.tool for r in gets})
        skip(
            f"no prompts/get was answered with an InputRequiredResult ({got} prompt(s) got as a client "
            f"that declared {_caps(sweep.capabilities)})"
        )
    for first in asked:
        rounds = [r for r in gets if r.tool == first.tool]
        final = rounds[-1]
        result = final.call.result
        if final is first or is_input_required(result):
            missed(
                f"prompt {first.tool!r}: still asking for input after {len(rounds) - 1} fulfilled "
                f"retr(y/ies) (at most {MAX_ROUNDS} are sent)",
                **final.call.excerpt(),
            )
        if not isinstance(result, dict):
            missed(
                f"prompt {first.tool!r}: the fulfilled retry drew {final.call.drew()}, not a result",
                **final.call.excerpt(),
            )
        problems = shape_errors("getPromptResult", result, ctx.revision)
        if problems:
            missed(
                f"prompt {first.tool!r}: the completed result is no GetPromptResult: " + "; ".join(problems),
                **final.call.excerpt(),
            )
    ctx.note(
        f"{len(asked)} prompt(s) asked for input and completed once it was given: "
        + ", ".join(sorted({r.tool for r in asked}))
    )
