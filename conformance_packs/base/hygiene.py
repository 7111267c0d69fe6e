"""Error hygiene: provoked errors must not leak stack traces or server file paths."""

from __future__ import annotations

from collections import Counter

from conformance.pack_api import CaseContext, NotSent, TransportTimeout, check, missed, skip
from conformance_packs.base.common import SWEEP_TIMEOUTS, error_texts, find_trace


@check("base.hygiene.no-stack-traces", "BASE-HYG-001", "errors carry no stack traces or file paths")
async def no_stack_traces(ctx: CaseContext) -> None:
    probes: list[tuple[str, dict[str, object] | None]] = [
        ("conformance/no-such-method", None),
        ("tools/list", {"cursor": "conformance-invalid-cursor-\u0000"}),
    ]
    if ctx.identity.has("tools"):
        probes.append(("tools/call", {"name": "conformance_no_such_tool_7f3a", "arguments": {}}))
        listed = (await ctx.list_all("tools/list", "tools")).items
        for tool in ctx.callable_tools(listed)[:20]:
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                # A wrong type for every argument: the commonest way to reach an unguarded handler.
                props = (tool.get("inputSchema") or {}).get("properties") or {}
                args: dict[str, object] = {name: {"conformance": [1, None]} for name in list(props)[:5]}
                args = args or {"_": 1}
                probes.append(("tools/call", {"name": tool["name"], "arguments": args}))
    if ctx.identity.has("resources"):
        probes.append(("resources/read", {"uri": "conformance://no-such-resource/7f3a"}))
    answered: Counter[str] = Counter()
    searched = 0
    attempted: set[str] = set()
    unanswered: list[str] = []
    unsent: list[str] = []
    for method, params in probes:
        if len(unanswered) >= SWEEP_TIMEOUTS:
            break
        attempted.add(method)
        try:
            call = await ctx.request(method, params)
        except NotSent:
            # Not sent at all (its tool or method already hung twice in this revision): nothing waited.
            unsent.append(f"{method} {(params or {}).get('name', '')}".strip())
            continue
        except TransportTimeout:
            # A slow tool breaks no rule; it only leaves this probe unjudged (see SWEEP_TIMEOUTS).
            unanswered.append(f"{method} {(params or {}).get('name', '')}".strip())
            continue
        answered[method] += 1
        for text in error_texts(call):
            searched += 1
            trace = find_trace(text)
            if trace:
                missed(f"{method} error leaks {trace!r}", **call.excerpt())
    wait = f"{ctx.options.timeout:g} s"
    if unsent:
        ctx.note(f"not sent, as what they call already hung twice in this revision: {', '.join(unsent)}")
    if not answered:
        said = [f"no answer within {wait}: {', '.join(unanswered)}"] if unanswered else []
        said += [f"not sent (already hung twice): {', '.join(unsent)}"] if unsent else []
        skip(f"nothing judged: no probe was answered ({'; '.join(said) or 'none sent'})")
    if not searched:
        # Answered, but with no error text (results, or refusals without a JSON-RPC body): nothing to search.
        skip(f"nothing judged: {answered.total()} answers carried no error text to search")
    ctx.note(f"{searched} error texts of {answered.total()} provoked answers searched")
    if unanswered:
        # Some were judged, so the PASS stands; the part left unjudged is named.
        silent = sorted(attempted - set(answered))
        never = f" (no {' or '.join(silent)} probe answered)" if silent else ""
        ctx.note(f"not judged, no answer within {wait}{never}: {', '.join(unanswered)}")
