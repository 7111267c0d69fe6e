"""The contract case of every scenario run: the client ran by the official contract, reached the
scenario server and exited 0. When it did not, this case says so once (with its stderr), and the
scenario's other cases that needed the exchange are SKIP blocked by it (`ClientContext.needs`)."""

from __future__ import annotations

from conformance.pack_api import EVERY_SCENARIO, ClientContext, client_check, unjudgeable
from conformance_packs.client import scenarios  # noqa: F401  (registers the scenarios)


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
    if ended.timed_out or ended.returncode != 0:
        unjudgeable(f"{ended.describe()}; what it sent is judged, what it did not send is not", **evidence)
    ctx.note(f"{ended.describe()}; it sent {len(ctx.recording.arrivals)} HTTP requests or stdio lines")
