"""The fuzz checks: two explorations per target (valid inputs, invalid inputs), judged by five checks.

The explorations are costly, so each runs once per (target, revision) and the checks that need it share
it; every check runs `once` per target (the newest revision it speaks), since input handling does not
depend on the revision and either rejection encoding passes. A finding is reported with its shrunk
input, the run's seed and a one-line command that replays exactly that input against the same target
(`--fuzz-replay`); the case's transcript holds only that input's exchange.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from typing import Any

from conformance.pack_api import (
    CaseContext,
    Model,
    Mutation,
    Unsupported,
    build,
    check,
    missed,
    skip,
    unjudgeable,
)
from conformance_packs.base.common import no_callable_reason, skip_tools_held_back, tools
from conformance_packs.fuzz.explore import (
    TRANSPORT_KINDS,
    Clock,
    Exploration,
    Finding,
    Lane,
    ToolRun,
    fuzz_tool,
    replay_one,
    run_seed,
)
from conformance_packs.fuzz.options import MODES, parse_replay


def target_spec(ctx: CaseContext) -> str | None:
    """The `--server` string that names this target again, or None for a launched reference server."""
    target = ctx.target
    if target.spec:
        return target.spec
    if target.kind == "stdio":
        return "stdio:" + shlex.join(target.argv)
    if not target.launch and target.url:
        return ("sse:" if target.kind == "sse" else "") + target.url
    return None


def replay_command(ctx: CaseContext, check_id: str, run: ToolRun, finding: Finding) -> str:
    case: dict[str, Any] = {"tool": run.tool, "mode": run.mode, "arguments": finding.example.arguments}
    mutation = finding.example.mutation
    if mutation is not None:
        case.update(keyword=mutation.keyword, pointer=mutation.pointer, detail=mutation.detail)
    parts = ["mcp-conformance", "run"]
    spec = target_spec(ctx)
    if spec:
        parts += ["--server", spec]
    parts += ["--suite", "fuzz", "--protocol", ctx.revision, "-k", check_id]
    parts += ["--timeout", f"{ctx.options.timeout:g}"]
    if ctx.options.call_tools != "safe":
        parts += ["--call-tools", ctx.options.call_tools]
    parts += ["--fuzz-replay", json.dumps(case, separators=(",", ":"))]
    return shlex.join(parts)


async def exploration(ctx: CaseContext, mode: str) -> Exploration:
    """The exploration of one mode for this (target, revision), run by the first check that needs it."""
    key = f"fuzz:{mode}"
    cached = ctx.shared.get(key)
    if isinstance(cached, Exploration):
        return cached
    every = await tools(ctx)
    listed = ctx.callable_tools(every)
    if not listed:
        skip_tools_held_back(ctx, no_callable_reason(ctx, every), every)
    names = list(dict.fromkeys(t["name"] for t in listed))
    schemas = {t["name"]: t.get("inputSchema") for t in reversed(listed)}
    found = Exploration(mode, run_seed(ctx))
    replay = ctx.options.pack_option("fuzz_replay")
    lane = Lane(ctx)
    try:
        if replay is not None:
            found.replay = True
            case = _replay_case(replay)
            if case.get("mode", "valid") != mode:
                skip(
                    f"--fuzz-replay holds a {case.get('mode', 'valid')}-input case; this check judges {mode}"
                )
            if case["tool"] not in names:
                skip(f"tool {case['tool']!r} is not among the tools the --call-tools policy allows")
            mutation = None
            if mode == "invalid":
                mutation = Mutation(
                    case["arguments"],
                    str(case.get("keyword", "?")),
                    str(case.get("pointer", "")),
                    str(case.get("detail", "")),
                )
            found.runs.append(await replay_one(ctx, lane, case["tool"], mode, case["arguments"], mutation))
        else:
            models: dict[str, Model | str] = {}
            for name in names:
                try:
                    models[name] = build(schemas[name])
                except Unsupported as exc:
                    models[name] = str(exc)
            # `--fuzz-budget` is per target: the clock is a fact of the target, whichever revision runs.
            clock = ctx.target_memo.get("fuzz:clock")
            if not isinstance(clock, Clock):
                fuzzable = sum(isinstance(m, Model) for m in models.values())
                clock = ctx.target_memo["fuzz:clock"] = Clock(
                    ctx.options.pack_option("fuzz_budget"), len(MODES) * fuzzable
                )
            for name in names:
                model = models[name]
                if not isinstance(model, Model):
                    found.runs.append(ToolRun(name, mode, 0, skipped=model))
                    continue
                run = await fuzz_tool(ctx, lane, name, model, mode, found.seed, clock.share())
                run.notes.extend(model.notes)
                clock.done()
                found.runs.append(run)
    finally:
        await lane.close()
    ctx.shared[key] = found
    return found


def _replay_case(text: str) -> dict[str, Any]:
    try:
        return parse_replay(text)
    except ValueError as exc:
        unjudgeable(str(exc))


def _summary(found: Exploration) -> str:
    fuzzed = [r for r in found.runs if not r.skipped]
    if found.replay:
        return f"replayed one {found.mode} input"
    rate = found.examples / found.seconds if found.seconds > 0 else 0.0
    text = (
        f"seed {found.seed}: {found.examples} {found.mode} inputs to {len(fuzzed)} tool(s) "
        f"in {found.seconds:.1f} s ({rate:.0f}/s)"
    )
    skipped = [f"{r.tool}: {r.skipped}" for r in found.runs if r.skipped]
    stopped = [f"{r.tool}: {r.stopped}" for r in fuzzed if r.stopped]
    if skipped:
        text += "; not fuzzed: " + "; ".join(skipped)
    if stopped:
        text += "; stopped early: " + "; ".join(stopped)
    return text


async def judge(
    ctx: CaseContext, check_id: str, modes: tuple[str, ...], wanted: Callable[[str], bool]
) -> None:
    """Fail the case with the first finding `wanted` selects, from the explorations of `modes`."""
    explorations = []
    for mode in modes:
        if ctx.options.pack_option("fuzz_replay") is not None and len(modes) > 1:
            case = _replay_case(ctx.options.pack_option("fuzz_replay"))
            if case.get("mode", "valid") != mode:
                continue
        explorations.append(await exploration(ctx, mode))
    ctx.facts["fuzz"] = {f.mode: f.facts() for f in explorations}
    runs = [r for f in explorations for r in f.runs if not r.skipped]
    if not runs:
        reasons = "; ".join(f"{r.tool}: {r.skipped}" for f in explorations for r in f.runs)
        skip(f"no tool could be fuzzed: {reasons}")
    if not any(r.examples for r in runs):
        skip("no input was sent: " + "; ".join(f"{r.tool}: {r.stopped or 'nothing generated'}" for r in runs))
    hits = [(run, f) for run in runs for kind, f in sorted(run.findings.items()) if wanted(kind)]
    for found in explorations:
        ctx.note(_summary(found))
    if not hits:
        return
    run, finding = hits[0]
    seed = next(f.seed for f in explorations if f.mode == run.mode)
    command = replay_command(ctx, check_id, run, finding)
    arguments = json.dumps(finding.example.arguments, ensure_ascii=False)
    if not finding.shrunk:
        shape = "input (not shrunk: seen only behind another finding, or past a bound)"
    elif run.stopped and not found_replay(ctx):
        shape = f"shrunk input (as far as the bounds allowed: {run.stopped})"
    else:
        shape = "shrunk input" if not found_replay(ctx) else "input"
    message = f"tool {run.tool!r}: {finding.message}; {shape} {_clip(arguments)}"
    if not ctx.options.pack_option("fuzz_replay"):
        message += f"; seed {seed}"
    others = [f"{r.tool}: {f.message} ({f.count}x)" for r, f in hits[1:]]
    if others:
        message += f"; {len(others)} more finding(s): " + "; ".join(_clip(o, 160) for o in others[:5])
    message += f"; replay: {command}"
    evidence: dict[str, Any] = {
        "tool": run.tool,
        "finding": finding.kind,
        "arguments": finding.example.arguments,
        "shrunk": finding.shrunk,
        "occurrences": finding.count,
        "seed": seed,
        "hypothesis_seed": run.seed,
        "replay": command,
        **finding.example.excerpt,
    }
    if finding.example.mutation is not None:
        evidence["rule"] = finding.example.mutation.rule
    if others:
        evidence["other_findings"] = others
    # The transcript of this case: the failing input's own exchange, not every example before it.
    ctx.attach(finding.example.entries)
    ctx.own_from(ctx.mark())
    missed(message, **evidence)


def found_replay(ctx: CaseContext) -> bool:
    return ctx.options.pack_option("fuzz_replay") is not None


def _clip(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@check(
    "fuzz.valid.answered",
    "FUZZ-VALID-001",
    "valid inputs are answered and the server lives on",
    capability="tools",
    once=True,
)
async def valid_answered(ctx: CaseContext) -> None:
    await judge(ctx, "fuzz.valid.answered", ("valid",), lambda kind: kind in TRANSPORT_KINDS)


@check(
    "fuzz.valid.no-internal-error",
    "FUZZ-VALID-002",
    "valid inputs never end in an internal error",
    capability="tools",
    once=True,
)
async def valid_no_internal_error(ctx: CaseContext) -> None:
    await judge(ctx, "fuzz.valid.no-internal-error", ("valid",), lambda kind: kind == "internal-error")


@check(
    "fuzz.invalid.answered",
    "FUZZ-INVALID-001",
    "invalid inputs are answered and the server lives on",
    capability="tools",
    once=True,
)
async def invalid_answered(ctx: CaseContext) -> None:
    await judge(ctx, "fuzz.invalid.answered", ("invalid",), lambda kind: kind in TRANSPORT_KINDS)


@check(
    "fuzz.invalid.rejected",
    "FUZZ-INVALID-002",
    "invalid inputs are rejected",
    capability="tools",
    once=True,
)
async def invalid_rejected(ctx: CaseContext) -> None:
    await judge(
        ctx,
        "fuzz.invalid.rejected",
        ("invalid",),
        lambda kind: kind.startswith("accepted:") or kind == "wrong-code",
    )


@check(
    "fuzz.hygiene.no-stack-traces",
    "FUZZ-HYG-001",
    "errors to fuzzed inputs carry no stack traces or file paths",
    capability="tools",
    once=True,
)
async def no_stack_traces(ctx: CaseContext) -> None:
    await judge(ctx, "fuzz.hygiene.no-stack-traces", MODES, lambda kind: kind == "trace")
