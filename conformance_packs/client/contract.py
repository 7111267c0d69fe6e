"""The contract case of every scenario run: the client ran by the official contract, reached the
scenario server and exited 0. When it did not, this case says so once (with its stderr), and the
scenario's other cases that needed the exchange are SKIP blocked by it (`ClientContext.needs`)."""

from __future__ import annotations

from conformance.pack_api import EVERY_SCENARIO, ClientContext, client_check, era_of, unjudgeable
from conformance_packs.client import scenarios  # noqa: F401  (registers the scenarios)
from conformance_packs.client.common import NOT_MODERN, declined


@client_check(
    "client.contract.run",
    "CLIENT-RUN-001",
    "the client acts out the scenario by the official contract and exits 0",
    scenario=EVERY_SCENARIO,
)
async def contract_run(ctx: ClientContext) -> None:
    ended = ctx.exit
    evidence = {"stderr": ended.stderr, "stdout": ended.stdout[-1000:]}
    if not ctx.recording.arrivals:
        unjudgeable(f"the client never reached the scenario server: {ended.describe()}", **evidence)
    failed = ended.timed_out or ended.returncode != 0
    if failed and era_of(ctx.revision) == "modern" and ctx.requests("initialize"):
        # before the scenario's allowed give-up: a client that never ran the scenario did not give up
        unjudgeable(f"{ended.describe()}; {NOT_MODERN}", **evidence)
    if ended.returncode not in (0, None) and (why := ctx.scenario.may_give_up()):
        ctx.note(f"{ended.describe()}: {why}")
        return
    if failed:
        if (offered := _other_offer(ctx)) is not None:
            unjudgeable(f"{ended.describe()}; {declined(offered, ctx.revision)}", **evidence)
        unjudgeable(f"{ended.describe()}; what it sent is judged, what it did not send is not", **evidence)
    ctx.note(f"{ended.describe()}; it sent {len(ctx.recording.arrivals)} HTTP requests or stdio lines")


def _other_offer(ctx: ClientContext) -> object | None:
    """What the client offered in initialize when it was not the revision the scenario plays (whose
    server then answered with its own, as a server supporting only that one must) and the client sent
    nothing after it (it disconnected), else None."""
    offered = ctx.recording.facts.get("protocol_offered", ctx.revision)
    went_on = any(m.method not in (None, "initialize") for m in ctx.recording.messages())
    return None if offered == ctx.revision or went_on else offered
