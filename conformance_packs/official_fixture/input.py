"""The fixture's input tools (FIXTURE-010 to -016): the forms its elicitation tools ask with (2025-11-25),
its multi-round tools completing once given their input, and -32021 for a capability the request did not
declare (2026-07-28).

The asks and the rounds are the base pack's input sweep's (a client declaring sampling, form elicitation
and roots, answering with canned results), so each tool is called once whichever packs run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.pack_api import CaseContext, blocked, check, missed, weak
from conformance_packs.base.input_sweep import InputSweep, Round, is_input_required
from conformance_packs.official_fixture.fixture import declared_sweep, first_call, incomplete, offered, texts

ELICIT = "elicitation/create"
#: SEP-1034: each primitive property of the fixture's form and the default it declares.
DEFAULTS: dict[str, tuple[str, Any]] = {
    "name": ("string", "John Doe"),
    "age": ("integer", 30),
    "score": ("number", 95.5),
    "status": ("string", "active"),
    "verified": ("boolean", True),
}
MISSING_CAPABILITY = -32021


async def form_properties(ctx: CaseContext, name: str, official: str) -> dict[str, Any]:
    """The requestedSchema properties of the first elicitation/create the fixture's tool `name` asked."""
    sweep = await declared_sweep(ctx, name, official)
    asks = [a for a in sweep.asks_of(name) if a.method == ELICIT and isinstance(a.params, dict)]
    if not asks:
        missed(
            f"{name} asked no elicitation/create of a client that declared form elicitation",
            **sweep.evidence(),
        )
    schema = asks[0].params.get("requestedSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def same(value: Any, wanted: Any) -> bool:
    """Equal and of the same JSON type (30 is no 30.0 nor true)."""
    return type(value) is type(wanted) and value == wanted


def default_misses(props: dict[str, Any]) -> list[str]:
    misses = []
    for field, (kind, default) in DEFAULTS.items():
        prop = props.get(field)
        if not isinstance(prop, dict):
            misses.append(f"{field}: missing")
        elif prop.get("type") != kind or not same(prop.get("default"), default):
            misses.append(f"{field}: type {prop.get('type')!r}, default {prop.get('default')!r}")
        elif field == "status" and default not in (prop.get("enum") or []):
            misses.append("status: its default is not one of its enum values")
    return misses


@check(
    "official-fixture.input.sep1034-defaults",
    "FIXTURE-010",
    "test_elicitation_sep1034_defaults asks with a default for each primitive type",
    eras=("legacy",),
)
async def sep1034_defaults(ctx: CaseContext) -> None:
    props = await form_properties(ctx, "test_elicitation_sep1034_defaults", "elicitation-sep1034-general")
    misses = default_misses(props)
    if misses:
        missed("the SEP-1034 form is not the fixture's: " + "; ".join(misses), diagnostics=str(props)[:1500])


def titled(options: Any) -> bool:
    return isinstance(options, list) and all(
        isinstance(o, dict) and isinstance(o.get("const"), str) and isinstance(o.get("title"), str)
        for o in options
    )


#: SEP-1330: each enum form of the fixture's form, as a test of its property.
ENUM_FORMS: dict[str, Callable[[dict[str, Any]], bool]] = {
    "untitledSingle": lambda p: (
        p.get("type") == "string" and isinstance(p.get("enum"), list) and "oneOf" not in p
    ),
    "titledSingle": lambda p: p.get("type") == "string" and titled(p.get("oneOf")) and "enum" not in p,
    "legacyEnum": lambda p: (
        p.get("type") == "string"
        and isinstance(p.get("enum"), list)
        and isinstance(p.get("enumNames"), list)
        and len(p["enumNames"]) == len(p["enum"])
    ),
    "untitledMulti": lambda p: (
        p.get("type") == "array"
        and isinstance(p.get("items"), dict)
        and isinstance(p["items"].get("enum"), list)
    ),
    "titledMulti": lambda p: (
        p.get("type") == "array" and isinstance(p.get("items"), dict) and titled(p["items"].get("anyOf"))
    ),
}


@check(
    "official-fixture.input.sep1330-enums",
    "FIXTURE-011",
    "test_elicitation_sep1330_enums asks with each of the five enum forms",
    eras=("legacy",),
)
async def sep1330_enums(ctx: CaseContext) -> None:
    props = await form_properties(ctx, "test_elicitation_sep1330_enums", "elicitation-sep1330-general")
    misses = [f for f, fits in ENUM_FORMS.items() if not (isinstance(props.get(f), dict) and fits(props[f]))]
    if misses:
        missed(
            "the SEP-1330 form lacks these enum forms as the fixture declares them: " + ", ".join(misses),
            diagnostics=str(props)[:1500],
        )


def answered_rounds(sweep: InputSweep, name: str) -> list[Round]:
    """The rounds of `name` that carried the client's input (the base sweep's probes, retries sent
    with one thing wrong on purpose, left out)."""
    return [r for r in sweep.rounds_of(name) if not r.probe]


#: SEP-2322's single-input tools and the multiple-input one, with the official check each completes.
COMPLETING = {
    "test_input_required_result_elicitation": "sep-2322-elicitation-complete",
    "test_input_required_result_sampling": "sep-2322-sampling-complete",
    "test_input_required_result_list_roots": "sep-2322-list-roots-complete",
    "test_input_required_result_multiple_inputs": "sep-2322-multiple-inputs-complete",
}


def completion_miss(rounds: list[Round], name: str) -> str:
    """Why `name`'s rounds do not ask for input and then complete ("" when they do)."""
    if not rounds or not is_input_required(rounds[0].call.result):
        return f"{name} did not answer its first call with an InputRequiredResult"
    last = rounds[-1].call.result
    if len(rounds) < 2 or is_input_required(last) or not isinstance(last, dict) or not last.get("content"):
        return f"{name} did not complete with content once its input was given"
    return ""


@check(
    "official-fixture.input.mrtr-complete",
    "FIXTURE-012",
    "the SEP-2322 input tools complete once their input is given",
    eras=("modern",),
)
async def mrtr_complete(ctx: CaseContext) -> None:
    named = await offered(ctx)
    present = [n for n in COMPLETING if n in named]
    if not present:
        incomplete("its SEP-2322 input tools", ", ".join(COMPLETING.values()), named)
    sweep = await declared_sweep(ctx, present[0], COMPLETING[present[0]])
    misses = [
        m for n in present if n in sweep.called and (m := completion_miss(answered_rounds(sweep, n), n))
    ]
    if misses:
        missed("; ".join(misses), **sweep.evidence())
    if len(present) < len(COMPLETING):
        incomplete(
            "all its SEP-2322 input tools",
            ", ".join(COMPLETING[n] for n in COMPLETING if n not in present),
            named,
        )


@check(
    "official-fixture.input.request-state",
    "FIXTURE-013",
    "test_input_required_result_request_state round-trips its requestState",
    eras=("modern",),
)
async def request_state(ctx: CaseContext) -> None:
    name = "test_input_required_result_request_state"
    sweep = await declared_sweep(ctx, name, "sep-2322-request-state-complete")
    rounds = answered_rounds(sweep, name)
    miss = completion_miss(rounds, name)
    if miss:
        missed(miss, **sweep.evidence())
    if not isinstance(rounds[0].call.result.get("requestState"), str):
        missed(f"{name}'s InputRequiredResult carries no requestState", **rounds[0].call.excerpt())
    if not any("state-ok" in t for t in texts(rounds[-1].call.result)):
        weak(f"{name}'s final text does not say state-ok, as the fixture's does", **rounds[-1].call.excerpt())


@check(
    "official-fixture.input.multi-round",
    "FIXTURE-014",
    "test_input_required_result_multi_round asks twice, with a new requestState, then completes",
    eras=("modern",),
)
async def multi_round(ctx: CaseContext) -> None:
    name = "test_input_required_result_multi_round"
    sweep = await declared_sweep(ctx, name, "sep-2322-multi-round-r2")
    rounds = answered_rounds(sweep, name)
    if len(rounds) < 3 or not all(is_input_required(r.call.result) for r in rounds[:2]):
        missed(f"{name} did not ask for input in two rounds", **sweep.evidence())
    first, second = (r.call.result.get("requestState") for r in rounds[:2])
    if not isinstance(second, str) or second == first:
        missed(f"{name}'s second round does not carry a new requestState", **rounds[1].call.excerpt())
    last = rounds[2].call.result
    if is_input_required(last) or not isinstance(last, dict) or not last.get("content"):
        missed(f"{name}'s third round is not a complete result with content", **rounds[2].call.excerpt())


@check(
    "official-fixture.input.missing-capability",
    "FIXTURE-015",
    "test_missing_capability is refused with -32021 naming sampling when sampling is undeclared",
    eras=("modern",),
)
async def missing_capability(ctx: CaseContext) -> None:
    call = await first_call(ctx, "test_missing_capability", "sep-2575-server-rejects-undeclared-capability")
    if call.error is None:
        missed(
            "test_missing_capability ran for a request that declared no sampling capability", **call.excerpt()
        )
    if call.error_code != MISSING_CAPABILITY:
        missed(f"test_missing_capability was refused with {call.error_code!r}, not -32021", **call.excerpt())
    data = call.error.get("data") if isinstance(call.error, dict) else None
    needed = data.get("requiredCapabilities") if isinstance(data, dict) else None
    if not (isinstance(needed, dict) and isinstance(needed.get("sampling"), dict)):
        missed(
            "the -32021 error's data.requiredCapabilities does not name sampling as an object",
            **call.excerpt(),
        )


@check(
    "official-fixture.input.missing-capability-http",
    "FIXTURE-016",
    "test_missing_capability's -32021 comes with HTTP 400",
    eras=("modern",),
    transports=("http",),
)
async def missing_capability_http(ctx: CaseContext) -> None:
    call = await first_call(ctx, "test_missing_capability", "sep-2575-missing-capability-http-400")
    if call.error_code != MISSING_CAPABILITY:
        blocked("official-fixture.input.missing-capability", "test_missing_capability drew no -32021")
    if call.reply.status != 400:
        missed(f"the -32021 error came with HTTP {call.reply.status}, not 400", **call.excerpt())
