"""A plan run into a report: the report builder a plan feeds, the run itself, and its close.

Every path that runs checks (the CLI's `run`, `front.api.run_report`, the pytest plugin, a `-j` worker
process judging one target) goes through these three steps, so each produces the same verdicts, IDs and
report. They live in the engine, not in a front end, because a worker process is the engine too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conformance.engine.checks import Check
from conformance.engine.context import RunOptions
from conformance.engine.events import Fanout, Sink
from conformance.engine.runner import Runner, run_all
from conformance.model.targets import Target
from conformance.reporting import canonical
from conformance.reporting.canonical import ReportBuilder

Plan = list[tuple[Target, list[Check]]]


def new_builder(plan: Plan, header: dict[str, Any] | None = None) -> ReportBuilder:
    """The report a plan's cases go into: its suites and the secrets every view masks."""
    suites = sorted({c.suite for _, checks in plan for c in checks})
    secrets = tuple(dict.fromkeys(s for target, _ in plan for s in target.secrets))
    return ReportBuilder(canonical.new_run_id(), {"suites": suites, **(header or {})}, secrets)


async def run_in_process(
    plan: Plan, options: RunOptions, builder: ReportBuilder, sinks: Sequence[Sink] = ()
) -> None:
    """Run the plan's targets in this process, feeding `builder` and `sinks`."""
    await run_all(plan, Runner(options, Fanout([builder, *sinks])))


async def run_plan_async(
    plan: Plan,
    options: RunOptions,
    builder: ReportBuilder,
    sinks: Sequence[Sink] = (),
) -> None:
    """Run the plan, feeding `builder` (which holds the report even if this is cancelled midway).

    With `-j` above 1 and more than one target, each target runs in a worker process of its own
    (`conformance.engine.workers`) and `builder` receives their reports joined in plan order."""
    from conformance.engine import workers

    if workers.spread(plan, options):
        await workers.run_spread(plan, options, builder, sinks)
        return
    await run_in_process(plan, options, builder, sinks)


def finish(builder: ReportBuilder, *, interrupted: bool = False) -> dict[str, Any]:
    """Close the report (marked incomplete when interrupted) and stamp its exit code."""
    if interrupted or builder.report["footer"].get("reason") == "running":
        builder.finish(False, "interrupted")
    builder.report["footer"]["exit_code"] = canonical.exit_code(builder.report)
    return builder.report
