"""A programmatic entry point: run suites and get the canonical report as a dict.

The pytest plugin, the snapshot extension and the project's tests call `run_report`. The CLI's `run`
calls the same steps `run_report` is made of (`select_checks`, `build_plan`, `with_budgets`,
`new_builder`, `run_plan_async`, `finish`) one by one, because between them it shows live progress,
keeps the report of a run cut short by Ctrl-C, and applies a baseline. Every path plans, runs and
closes the report with these functions, so they produce the same verdicts, IDs and reports; the last
three are the engine's (`conformance.engine.plan`), which a `-j` worker process runs too.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.engine.checks import Check, load_pack
from conformance.engine.context import RunOptions
from conformance.engine.plan import finish, new_builder, run_plan_async
from conformance.model import packs
from conformance.model.targets import Target, parse_targets, reference_targets


def run_options(
    *,
    timeout: float | None = None,
    start_timeout: float | None = None,
    target_budget: float | None = None,
    protocol: str = "auto",
    call_tools: str = "safe",
    max_restarts: int = 8,
    strict: bool = False,
    experimental: bool = False,
    named_suites: Sequence[str] = (),
    jobs: int | None = 1,
    pack_values: Mapping[str, Any] | None = None,
) -> RunOptions:
    """The run's options from a front end's values (the CLI's flags, the pytest plugin's `--mcp-*`),
    so both judge alike: a budget not given takes RunOptions' default, a pack option not given
    (None) its own, and the suites the user named are those a profile is claimed by. `jobs` None (no
    `-j` given) is one job, except that an HTTP target's revisions may run side by side
    (`RunOptions.side_by_side`)."""
    return RunOptions(
        timeout=timeout or RunOptions.timeout,
        start_timeout=start_timeout or RunOptions.start_timeout,
        target_budget=target_budget or RunOptions.target_budget,
        protocol=protocol,
        call_tools=call_tools,
        max_restarts=max_restarts,
        strict=strict,
        experimental=experimental,
        claimed_suites=frozenset(named_suites),
        jobs=jobs or 1,
        side_by_side=jobs is None,
        pack_options={dest: value for dest, value in (pack_values or {}).items() if value is not None},
    )


def header_options(options: RunOptions, suites: Sequence[str], select: str | None) -> dict[str, Any]:
    """The run's options as the report's header records them (the CLI and the pytest plugin alike),
    with the settled options of the packs that run (the fuzz seed drawn when none was given, so the
    run can be repeated)."""
    from conformance.model import packs

    return {
        "protocol": options.protocol,
        "timeout": options.timeout,
        "start_timeout": options.start_timeout,
        "target_budget": options.target_budget,
        "call_tools": options.call_tools,
        "select": select or "",
        "max_restarts": options.max_restarts,
        "strict": options.strict,
        "experimental": options.experimental,
        **{
            option.dest: options.pack_option(option.dest)
            for pack, option in packs.all_options()
            if pack.name in suites
        },
    }


def select_checks(suites: Sequence[str], select: str | None = None) -> list[Check]:
    checks = [c for suite in suites for c in load_pack(suite)]
    if select:
        words = [w.strip() for w in select.split(",") if w.strip()]
        checks = [c for c in checks if any(w in c.id or w in c.requirement for w in words)]
    return checks


def build_plan(
    servers: Sequence[str | Target] | None, suites: Sequence[str], checks: list[Check]
) -> list[tuple[Target, list[Check]]]:
    """With servers: every chosen check against each. Without: each suite against its own reference."""
    packs.judging_mcp_servers(suites)
    if servers:
        # A target file of `[[targets]]` is all of its targets, in file order.
        targets = [t for s in servers for t in ([s] if isinstance(s, Target) else parse_targets(s))]
        return [(target, checks) for target in targets]
    chosen = {c.suite for c in checks}
    return [
        (target, [c for c in checks if c.suite == suite])
        for suite in suites
        if suite in chosen
        for target in reference_targets(suite)
    ]


def with_budgets(
    plan: list[tuple[Target, list[Check]]],
    timeout: float | None,
    start_timeout: float | None,
    target_budget: float | None = None,
) -> list[tuple[Target, list[Check]]]:
    """The plan with the budgets a user named (`--timeout`, `--start-timeout`, `--target-budget`) over
    those of each target file's `[timeouts]`; what neither names is left to RunOptions. The CLI and the
    pytest plugin agree."""
    if timeout is None and start_timeout is None and target_budget is None:
        return plan
    return [
        (
            dataclasses.replace(
                target,
                request_timeout=target.request_timeout if timeout is None else timeout,
                start_timeout=target.start_timeout if start_timeout is None else start_timeout,
                target_budget=target.target_budget if target_budget is None else target_budget,
            ),
            checks,
        )
        for target, checks in plan
    ]


def run_report(
    servers: Sequence[str | Target] | None = None,
    suites: Sequence[str] | None = None,
    *,
    select: str | None = None,
    options: RunOptions | None = None,
    header: dict[str, Any] | None = None,
    budgets: tuple[float | None, float | None, float | None] = (None, None, None),
) -> dict[str, Any]:
    """Run synchronously and return the canonical report (the CLI's `run` without files or progress).

    `header` adds to the report's header (the pytest plugin records its command line and options
    there, as the CLI does); `budgets` are a user's (request, start, target) budgets, over a target file's.
    """
    if suites is None:  # the packs that declare themselves the default (the base protocol's)
        suites = packs.defaults_for_servers()
    checks = select_checks(suites, select)
    plan = with_budgets(build_plan(servers, suites, checks), *budgets)
    builder = new_builder(plan, header)
    asyncio.run(run_plan_async(plan, options or RunOptions(), builder))
    return finish(builder)


def issuer_suites() -> list[str]:
    """The installed packs that judge an OAuth authorization server (`Pack.side`), in report order."""
    return list(packs.names_of(packs.AUTHORIZATION_SERVER))


def run_issuer_report(
    targets: Sequence[Any],
    *,
    select: str | None = None,
    options: RunOptions | None = None,
    header: dict[str, Any] | None = None,
    sinks: Sequence[Any] = (),
) -> dict[str, Any]:
    """Judge authorization servers (`conformance.engine.issuer.IssuerTarget`s) with every pack that
    judges one, synchronously, and return the canonical report: `authorization`'s run, and the tests'."""
    from conformance.engine.events import Fanout
    from conformance.engine.issuer import run_issuers
    from conformance.reporting import canonical

    suites = issuer_suites()
    checks = select_checks(suites, select)
    secrets = tuple(dict.fromkeys(s for target in targets for s in target.secrets))
    builder = canonical.ReportBuilder(canonical.new_run_id(), {"suites": suites, **(header or {})}, secrets)
    try:
        asyncio.run(run_issuers(list(targets), checks, options or RunOptions(), Fanout([builder, *sinks])))
    except KeyboardInterrupt:
        return finish(builder, interrupted=True)
    return finish(builder)
