"""2026-07-28's multi-round requests as a client retries them (SEP-2322): the state echoed exactly, a
new JSON-RPC id, no state where none was given, nothing carried into another request, and a result
without resultType taken as complete."""

from __future__ import annotations

from functools import partial

from conformance.pack_api import ClientContext, Message, client_check, missed, weak
from conformance_packs.client.common import shown

SCENARIO = "sep-2322-client-request-state"
STATELESS = ("2026-07-28",)
MODES = ("http", "stdio")
_check = partial(client_check, scenario=SCENARIO, revisions=STATELESS, transports=MODES)


def _calls(ctx: ClientContext, tool: str) -> tuple[list[Message], list[Message]]:
    """The first calls of `tool` and its retries (the calls carrying inputResponses)."""
    calls = [
        m for m in ctx.requests("tools/call") if isinstance(m.params, dict) and m.params.get("name") == tool
    ]
    retries = [m for m in calls if "inputResponses" in m.params]
    return [m for m in calls if m not in retries], retries


def _retried(ctx: ClientContext, tool: str) -> tuple[Message, Message]:
    """The first call of `tool` and its retry; none is the act not done (or blocked by the contract)."""
    first, retries = _calls(ctx, tool)
    if not first or not retries:
        ctx.needs("tools/call", f"call {tool} and retry it with the input it asks for")
        ctx.unless_failed(f"the client did not retry {tool}")
        weak(f"the client never retried {tool} with inputResponses (the official check fails this)")
    return first[0], retries[0]


@_check(
    "client.mrtr.state-echoed",
    "CLIENT-MRTR-001",
    "a retry echoes requestState exactly",
)
async def state_echoed(ctx: ClientContext) -> None:
    _, retry = _retried(ctx, "test_mrtr_echo_state")
    given, said = ctx.recording.facts.get("request_state"), retry.params.get("requestState")
    if said != given:
        missed(
            f"the retry carried requestState {shown(said)}, not the {shown(given)} the server gave",
            request=retry.value,
        )


@_check(
    "client.mrtr.new-id",
    "CLIENT-MRTR-002",
    "a retry is a new request, with a JSON-RPC id of its own",
)
async def new_id(ctx: ClientContext) -> None:
    first, retry = _retried(ctx, "test_mrtr_echo_state")
    if retry.value.get("id") == first.value.get("id"):
        missed(f"the retry reused the first request's id {shown(first.value.get('id'))}", request=retry.value)


@_check(
    "client.mrtr.no-state-invented",
    "CLIENT-MRTR-003",
    "a retry carries no requestState when the server gave none",
)
async def no_state_invented(ctx: ClientContext) -> None:
    _, retry = _retried(ctx, "test_mrtr_no_state")
    if "requestState" in retry.params:
        missed(
            f"the retry carried requestState {shown(retry.params['requestState'])}, given none",
            request=retry.value,
        )


@_check(
    "client.mrtr.isolation",
    "CLIENT-MRTR-004",
    "another request carries no inputResponses or requestState of a multi-round one",
)
async def isolation(ctx: ClientContext) -> None:
    first, retries = _calls(ctx, "test_mrtr_unrelated")
    for call in first + retries:
        carried = [key for key in ("inputResponses", "requestState") if key in call.params]
        if carried:
            missed(f"test_mrtr_unrelated was called with {' and '.join(carried)}", request=call.value)
    if not first and not retries:
        ctx.needs("tools/call", "call test_mrtr_unrelated")
        ctx.absent("the client did not call test_mrtr_unrelated: no call to judge")
        ctx.absent("the client did not call test_mrtr_unrelated")


@_check(
    "client.mrtr.default-complete",
    "CLIENT-MRTR-005",
    "a result without resultType is taken as complete",
)
async def default_complete(ctx: ClientContext) -> None:
    first, retries = _calls(ctx, "test_mrtr_no_result_type")
    if retries:
        missed(
            "the client retried test_mrtr_no_result_type, whose result had no resultType",
            request=retries[0].value,
        )
    if not first:
        ctx.needs("tools/call", "call test_mrtr_no_result_type")
        ctx.absent("the client did not call test_mrtr_no_result_type")
