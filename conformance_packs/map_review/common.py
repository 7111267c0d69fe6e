"""What the MAP checks share: the seed's contract, tool calls with their outcome (C-1/C-2), fresh reviews
from the fixture controller, and the "commits nothing" comparison of C-4.

Every helper returns raw evidence (the `Call`) next to its reading, so a verdict can always show the exact
request and response it was made from.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

from conformance.pack_api import (
    Call,
    CaseContext,
    CheckFunc,
    Fixtures,
    Reply,
    Session,
    classified,
    fixtures,
    missed,
    optional_fixtures,
    profile_checks,
    schema,
    skip,
)
from conformance.pack_api import schema_errors as core_schema_errors

SCHEMA_ID: Final = "urn:mcp-conformance:map-review:1"
SUITE: Final = "map-review"
READ: Final = "read_review"
DECIDE: Final = "decide_review"
DECISIONS: Final = ("approve", "decline", "request-changes")
#: Gap rule G-M2: the states a decline or request-changes result may report.
CLOSED_STATES: Final = frozenset({"declined", "changes_requested", "changes-requested", "closed"})
UNKNOWN_REFERENCE: Final = "urn:example:proposal:does-not-exist"
#: The check of MAP-PROFILE-001: when it finds neither tool, every other MAP check is SKIP, blocked by it.
PROFILE_CHECK: Final = "map-review.profile.shown"


def contract() -> dict[str, Any]:
    return schema(SCHEMA_ID)


def seed_tool(name: str) -> dict[str, Any]:
    """The seed's definition of one tool: name, description, inputSchema, outputSchema (when declared)."""
    doc = contract()
    for entry in doc["x-tools"]:
        if entry["name"] == name:
            tool = {"name": name, "description": entry["description"]}
            tool["inputSchema"] = doc["$defs"][entry["inputSchema"]]
            if "outputSchema" in entry:
                tool["outputSchema"] = doc["$defs"][entry["outputSchema"]]
            return tool
    raise KeyError(name)


def schema_errors(definition: str, instance: Any, limit: int = 5) -> list[str]:
    """Violations of one definition of the MAP schema (format assertion on: C-6)."""
    return core_schema_errors(SCHEMA_ID, definition, instance, limit)


# --------------------------------------------------------------------------- listing


async def listed_tools(ctx: CaseContext) -> tuple[dict[str, dict[str, Any]], list[Call]]:
    """Every listed tool by name (the engine's listing, `ctx.list_all`), once per (target, revision).

    A listing that did not end (a repeated cursor, the page cap) is read as far as it went: the base suite
    judges pagination. The first tool of a name wins.
    """
    found = await ctx.list_all("tools/list", "tools", attach=False)
    tools: dict[str, dict[str, Any]] = {}
    for tool in found.objects():
        if isinstance(tool.get("name"), str):
            tools.setdefault(tool["name"], tool)
    return tools, found.calls


async def profile_shown(ctx: CaseContext) -> bool:
    """Whether tools/list shows the profile's central artifact: read_review or decide_review."""
    tools, _ = await listed_tools(ctx)
    return READ in tools or DECIDE in tools


async def listed_tool(ctx: CaseContext, name: str) -> dict[str, Any]:
    tools, _ = await listed_tools(ctx)
    if name not in tools:
        skip(f"needs the tool {name!r} in tools/list (see map-review.tools.listed)")
    return tools[name]


# --------------------------------------------------------------------------- calls


async def call_tool(
    ctx: CaseContext, name: str, arguments: dict[str, Any], session: Session | None = None
) -> Reply:
    """tools/call on the shared session (or `session`); a transport failure propagates as ERROR."""
    return await classified(ctx, "tools/call", {"name": name, "arguments": arguments}, session)


async def read(ctx: CaseContext, reference: str, session: Session | None = None) -> Reply:
    return await call_tool(ctx, READ, {"reference": reference}, session)


def decide_args(
    review_id: str, decision: str, revision: str | None, comment: str | None = None
) -> dict[str, Any]:
    args: dict[str, Any] = {"review_id": review_id, "decision": decision}
    if revision is not None:
        args["expected_revision"] = revision
    if comment is not None:
        args["comment"] = comment
    return args


async def decide(
    ctx: CaseContext,
    review_id: str,
    decision: str,
    revision: str | None,
    comment: str | None = None,
    session: Session | None = None,
) -> Reply:
    return await call_tool(ctx, DECIDE, decide_args(review_id, decision, revision, comment), session)


# --------------------------------------------------------------------------- fixtures and reviews


@dataclass
class Review:
    """An open review the harness arranged and read: what the later steps compare against."""

    review_id: str
    reference: str
    revision: str
    sc: dict[str, Any]
    read: Reply | None = None

    def terms(self) -> dict[str, Any]:
        """The action-relevant terms as read: what an approval at this revision must publish."""
        publication = self.sc.get("publication") if isinstance(self.sc.get("publication"), dict) else {}
        assert isinstance(publication, dict)
        content = publication.get("content") if isinstance(publication.get("content"), dict) else {}
        artifact = (
            self.sc.get("content_artifact") if isinstance(self.sc.get("content_artifact"), dict) else {}
        )
        return {
            "content_digest": (content or {}).get("digest"),
            "content_text": (artifact or {}).get("text"),
            "destinations": publication.get("destinations"),
            "schedule": publication.get("schedule"),
        }


async def fx(ctx: CaseContext, *hooks: str) -> Fixtures:
    """The target's controller when it offers every hook named; else the case ends SKIP `needs: ...`."""
    return await fixtures(ctx, *hooks, schema_id=SCHEMA_ID)


async def fx_optional(ctx: CaseContext) -> Fixtures | None:
    return await optional_fixtures(ctx, SCHEMA_ID)


async def new_review(ctx: CaseContext, fixture: Fixtures, **params: Any) -> Review:
    """create_review, then read it: the review as the primary account sees it."""
    created = await fixture.call("create_review", **params)
    return await reread(ctx, created["review_id"], created["reference"])


async def reread(ctx: CaseContext, review_id: str, reference: str) -> Review:
    reply = await read(ctx, reference)
    sc = reply.structured
    if not reply.outcome.success or not isinstance(sc, dict) or not isinstance(sc.get("revision"), str):
        skip(
            "needs a readable open review: read_review of a review the controller just created answered "
            f"{reply.outcome.describe()} (see the map-review.read checks)"
        )
    return Review(review_id, reference, sc["revision"], sc, reply)


async def open_review(ctx: CaseContext) -> Review:
    """A fresh open review and its first read, whatever that read answered (the READ rows judge it).

    The review comes from create_review, or else from the target file's `[map] reference`.
    """
    fixture = await fx_optional(ctx)
    review_id = ""
    if fixture is not None and fixture.has("create_review"):
        created = await fixture.call("create_review")
        review_id, reference = created["review_id"], created["reference"]
    else:
        settings = ctx.target.settings.get("map")
        configured = settings.get("reference") if isinstance(settings, dict) else None
        if not isinstance(configured, str):
            skip("needs: create_review (or a [map] reference of an open review in the target file)")
        reference = configured
    reply = await read(ctx, reference)
    sc = reply.structured if reply.outcome.success and isinstance(reply.structured, dict) else {}
    revision = sc.get("revision")
    return Review(
        review_id or str(sc.get("review_id", "")),
        reference,
        revision if isinstance(revision, str) else "",
        sc,
        reply,
    )


async def readable_review(ctx: CaseContext) -> Review:
    """A fresh open review whose read succeeded with an object; otherwise SKIP (READ-001 judges that)."""
    review = await open_review(ctx)
    assert review.read is not None
    if not review.read.outcome.success or not review.sc:
        skip(f"needs a successful read of an open review; it answered {review.read.outcome.describe()}")
    return review


# --------------------------------------------------------------------------- C-4: commits nothing


@dataclass
class Snapshot:
    """What the harness can observe of one review: its read, and the oracle's view when offered."""

    outcome: str
    sc: Any
    state: dict[str, Any] | None
    jobs: list[Any] | None
    notes: list[str] = field(default_factory=list)

    def job_count(self) -> int | None:
        return None if self.jobs is None else len(self.jobs)


async def snapshot(ctx: CaseContext, fixture: Fixtures | None, review: Review) -> Snapshot:
    reply = await read(ctx, review.reference)
    state = jobs = None
    if fixture is not None and fixture.has("review_state"):
        state = await fixture.call("review_state", review_id=review.review_id)
    if fixture is not None and fixture.has("publication_jobs"):
        jobs = (await fixture.call("publication_jobs", review_id=review.review_id))["jobs"]
    status = reply.outcome.status if reply.outcome.kind == "STATUS" else None
    return Snapshot(
        f"{reply.outcome.kind}:{status}",
        copy.deepcopy(reply.structured) if reply.outcome.success else None,
        state,
        jobs,
    )


def differences(before: Snapshot, after: Snapshot) -> list[str]:
    """What changed between two snapshots of one review (an empty list: nothing committed)."""
    found = []
    if before.outcome != after.outcome:
        found.append(f"the read changed from {before.outcome} to {after.outcome}")
    elif before.sc != after.sc:
        old = before.sc.get("revision") if isinstance(before.sc, dict) else None
        new = after.sc.get("revision") if isinstance(after.sc, dict) else None
        found.append(f"the review read back differently (revision {old!r} -> {new!r})")
    if before.state is not None and after.state is not None and before.state != after.state:
        found.append(f"review_state changed from {before.state} to {after.state}")
    if before.jobs is not None and after.jobs is not None and before.jobs != after.jobs:
        found.append(f"publication_jobs went from {len(before.jobs)} to {len(after.jobs)} job(s)")
    return found


async def expect_nothing_committed(
    ctx: CaseContext, fixture: Fixtures | None, review: Review, before: Snapshot, what: str, reply: Reply
) -> Snapshot:
    """C-4: re-read after an expected refusal; FAIL if anything the harness can observe changed."""
    after = await snapshot(ctx, fixture, review)
    changed = differences(before, after)
    if changed:
        missed(
            f"{what} was refused ({reply.outcome.describe()}) but committed: {'; '.join(changed)}",
            **reply.excerpt(),
        )
    if after.jobs is None:
        note_once(
            ctx, "publication_jobs not offered: queued jobs were not observed (C-4 used the read-back only)"
        )
    return after


def note_once(ctx: CaseContext, text: str) -> None:
    if text not in ctx.notes:
        ctx.note(text)


# --------------------------------------------------------------------------- expectations


def expect_success(reply: Reply, what: str) -> None:
    if not reply.outcome.success:
        missed(f"{what}: expected SUCCESS, got {reply.outcome.describe()}", **reply.excerpt())


def expect_status(ctx: CaseContext, reply: Reply, statuses: tuple[int, ...], what: str) -> None:
    """The reply maps (C-1/C-2) to one of `statuses`; a text-only match is WARN weak-error-encoding."""
    outcome = reply.outcome
    wanted = " or ".join(str(s) for s in statuses)
    if outcome.success:
        missed(f"{what}: expected {wanted}, got SUCCESS (isError is not true)", **reply.excerpt())
    if outcome.kind != "STATUS" or outcome.status not in statuses:
        missed(f"{what}: expected {wanted}, got {outcome.describe()}", **reply.excerpt())
    if outcome.weak:
        ctx.soft_warn(
            f"weak-error-encoding: {what} says {outcome.status} only in its text ({outcome.code!r})"
        )


def expect_refused(ctx: CaseContext, reply: Reply, what: str) -> None:
    """Not SUCCESS (gap rule G-M4: 403, 404 or 409 all count); an unclassifiable error is WARN."""
    outcome = reply.outcome
    if outcome.success:
        missed(f"{what}: expected a refusal, got SUCCESS", **reply.excerpt())
    if outcome.kind == "STATUS" and outcome.status in (403, 404, 409):
        if outcome.weak:
            ctx.soft_warn(f"weak-error-encoding: {what} is refused only in text ({outcome.code!r})")
        note_once(ctx, f"{what}: refused as {outcome.describe()}")
        return
    ctx.soft_warn(f"{what}: refused, but as {outcome.describe()}, not a 403, 404 or 409 class (G-M4)")


def expect_rejected_input(ctx: CaseContext, reply: Reply, what: str) -> None:
    """C-3: -32602 or an isError result both reject; SUCCESS fails; another JSON-RPC error is WARN."""
    outcome, call = reply.outcome, reply.call
    if outcome.success:
        missed(f"{what} was accepted (SUCCESS); it must be rejected", **reply.excerpt())
    if call.error is not None and call.error_code != -32602 and outcome.status != 400:
        ctx.soft_warn(
            f"{what} was rejected with JSON-RPC code {call.error_code!r}, not -32602 or isError (C-3)"
        )


def text_mirror(result: dict[str, Any], structured: Any) -> tuple[bool, bool, str | None]:
    """(a JSON text block exists, one deep-equals structuredContent, the first JSON text seen)."""
    found_json = False
    first: str | None = None
    for block in result.get("content") or []:
        if not (
            isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        ):
            continue
        try:
            value = json.loads(block["text"])
        except ValueError:
            continue
        found_json = True
        first = first if first is not None else block["text"]
        if value == structured:
            return True, True, block["text"]
    return found_json, False, first


async def second_session(ctx: CaseContext, fixture: Fixtures) -> tuple[Session, str]:
    """A new session acting as the second account (second_account hook), closed with the case."""
    info = await fixture.call("second_account")
    return await ctx.session_as(info), str(info["account"])


def parse_instant(text: str) -> int:
    """An RFC 3339 instant as integer milliseconds since the epoch."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)


def format_instant(ms: int) -> str:
    """Milliseconds since the epoch as an RFC 3339 instant with milliseconds (for set_clock)."""
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def expires_ms(review: Review) -> int:
    value = review.sc.get("expires_at")
    if not isinstance(value, str):
        missed(f"the review has no expires_at string: {value!r}")
    try:
        return parse_instant(value)
    except ValueError:
        missed(f"the review's expires_at {value!r} is not an RFC 3339 instant")


# --------------------------------------------------------------------------- exclusive checks


def map_check(
    check_id: str, requirement: str, title: str, *, exclusive: bool = False, once: bool = False
) -> Callable[[CheckFunc], CheckFunc]:
    """`check`, run in the target's section (`ctx.exclusive()` when it moves the clock or resets the
    state, else `ctx.shared_section()`).

    Revisions of one target may run at once (`-j`), all against one service. A check that sets the clock
    past an expiry, or wipes the state, would turn another revision's concurrent decision into a false 410
    or a vanished review; so those checks run alone among the target's MAP checks.

    Every check but MAP-PROFILE-001's first asks whether the server shows the profile at all: a server
    that lists neither tool gets one FAIL (that row) and SKIPs blocked by it, not a FAIL per row judged
    on an absence.
    """

    section = (lambda ctx: ctx.exclusive()) if exclusive else (lambda ctx: ctx.shared_section())
    return _profile_check(check_id, requirement, title, section=section, once=once)


_profile_check = profile_checks(
    PROFILE_CHECK,
    lambda ctx: profile_shown(ctx),
    f"tools/list lists neither {READ} nor {DECIDE}, so the server does not show the MAP review profile",
)
