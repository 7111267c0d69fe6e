"""Mutants of the reference MAP review service: the reference with exactly one planted defect each.

    python -m tests.servers.map_mutants --defect NAME [--db FILE] [--http --port 0]     # the service
    python -m tests.servers.map_mutants --defect NAME --controller --db FILE           # its controller
    python -m tests.servers.map_mutants --controller --hooks create_review,reset --db FILE

Each defect overrides one rule of `MapStore` or `MapService`, so that everything else stays the reference
and a map-review check that fails can only be failing on that defect. `--hooks` serves a controller with
only the named hooks (the SKIP `needs:` tests).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from collections.abc import Sequence
from typing import Any

import jsonschema
import mcp_types as types

from conformance.fixtures import Controller, HookError
from conformance_reference import map_controller, map_server
from conformance_reference.map_state import (
    OPEN,
    P7,
    STATE_AFTER,
    WITHDRAWN,
    MapStore,
    Principal,
    Row,
    ServiceError,
    compact,
    format_instant,
)

JSON = dict[str, Any]


class LostLock(MapStore):
    """Check-then-act: the rules are checked in one transaction and the effect written in another."""

    def decide(
        self, principal: Principal, review_id: str, decision: str, expected_revision: str, comment: str | None
    ) -> JSON:
        with self._connection() as conn:
            row = self._row(conn, "review_id", review_id)
            self.guard(conn, row, principal, decision, expected_revision)
        assert row is not None
        time.sleep(0.03)  # the window in which another decision slips through
        with self.transaction() as conn:
            self.commit_decision(conn, row, decision, comment)
        return {"review_id": review_id, "state": STATE_AFTER[decision]}


class CommitOn409(MapStore):
    """A stale-revision 409 that still records the decision (and queues the job)."""

    def decide(
        self, principal: Principal, review_id: str, decision: str, expected_revision: str, comment: str | None
    ) -> JSON:
        try:
            return super().decide(principal, review_id, decision, expected_revision, comment)
        except ServiceError as exc:
            if exc.code != "stale_revision":
                raise
            with self.transaction() as conn:
                row = self._row(conn, "review_id", review_id)
                assert row is not None
                self.commit_decision(conn, row, decision, comment)
            raise


class NoExpiry(MapStore):
    def check_expiry(self, row: Row, now_ms: int) -> None:
        return None


class StillOpenAfterDecision(MapStore):
    """A decided review still reads as it was: state awaiting_review, though decide answered queued."""

    def read(self, principal: Principal, reference: str) -> str:
        with self._connection() as conn:
            row = self._row(conn, "reference", reference)
        if row is not None and self.visible(row, principal) and row.state != OPEN:
            return self.read_document(row)
        return super().read(principal, reference)


class DigestWithoutFinalNewline(MapStore):
    def content_digest(self, text: str) -> str:
        return super().content_digest(text[:-1] if text.endswith("\n") else text)


class RecipientNotEnforced(MapStore):
    """Anyone may decide any review (reads are still limited)."""

    def check_recipient(self, row: Row, principal: Principal) -> bool:
        return True


class TenantNotEnforced(MapStore):
    def visible(self, row: Row, principal: Principal) -> bool:
        return row.account == principal.account


class AllowedActionsNotEnforced(MapStore):
    def check_allowed(self, row: Row, decision: str) -> None:
        return None


class SnapshotFromCurrent(MapStore):
    """The job keeps no frozen snapshot: the publisher would use whatever the review says now."""

    def job_snapshot(self, row: Row) -> JSON | None:
        return None


class JobPublishesPublic(MapStore):
    """The queued job widens every destination to public: not the terms that were approved."""

    def job_snapshot(self, row: Row) -> JSON | None:
        snapshot = super().job_snapshot(row)
        assert snapshot is not None
        snapshot["destinations"] = [
            {k: v for k, v in {**d, "visibility": "public"}.items() if k != "audience"}
            for d in snapshot["destinations"]
        ]
        return snapshot


class StaleRevisionAccepted(MapStore):
    def check_revision(self, row: Row, expected_revision: str) -> None:
        return None


class RevocationIgnored(MapStore):
    def check_permission(self, row: Row, principal: Principal) -> None:
        return None


class WithdrawIgnored(MapStore):
    def check_open(self, row: Row) -> None:
        if row.state not in (OPEN, WITHDRAWN):
            raise ServiceError(409, "already_decided", "The review was already decided.")


class WrongState(MapStore):
    def read_document(self, row: Row) -> str:
        doc = row.doc
        doc["state"] = "open"
        return compact(doc)


class UwDigestSpelling(MapStore):
    """contractDigest spelled the UW way (sha256:) on every read."""

    def read_document(self, row: Row) -> str:
        doc = row.doc
        doc["contract"]["contractDigest"] = doc["contract"]["contractDigest"].replace("sha-256:", "sha256:")
        return compact(doc)


class LeakyRefusal(MapStore):
    """A refused read names the review it refuses to show."""

    def read(self, principal: Principal, reference: str) -> str:
        with self._connection() as conn:
            row = self._row(conn, "reference", reference)
        if row is not None and not self.visible(row, principal):
            title = row.doc["subject"]["title"]
            raise ServiceError(404, "not_found", f"Review {row.review_id} ({title}) is not offered to you.")
        return super().read(principal, reference)


class ReferenceNormalised(MapStore):
    """The read echoes the reference upper-cased instead of byte for byte."""

    def read_document(self, row: Row) -> str:
        doc = row.doc
        doc["reference"] = doc["reference"].upper()
        return compact(doc)


class UnknownAction(MapStore):
    """allowed_actions also offers `publish`, which is not a decision of decide_review."""

    def read_document(self, row: Row) -> str:
        doc = row.doc
        doc["allowed_actions"] = [*doc["allowed_actions"], "publish"]
        return compact(doc)


class FabricatesUnknown(MapStore):
    """A read of a reference that does not exist answers with a made-up open review."""

    def read(self, principal: Principal, reference: str) -> str:
        with self._connection() as conn:
            row = self._row(conn, "reference", reference)
        if row is None:
            return compact({**P7, "review_id": "ghost", "reference": reference, "revision": "ghost-r1"})
        return super().read(principal, reference)


class RevisionNotBumped(MapStore):
    """A change of the replaced revision leaves the review's revision as it was."""

    def mutate_terms(self, review_id: str, term: str) -> JSON:
        if term != "replaces_revision":
            return super().mutate_terms(review_id, term)
        with self.transaction() as conn:
            row = self._existing(conn, review_id)
            doc = row.doc
            doc["publication"]["destinations"][0]["replacesRevision"] = "published-unbumped"
            self._save(conn, row, doc)
        return {"revision": doc["revision"]}


class RestrictedWithoutAudience(MapStore):
    """Restricting a destination drops its audience: the details break the contract's rule."""

    def mutate_terms(self, review_id: str, term: str) -> JSON:
        result = super().mutate_terms(review_id, term)
        if term == "visibility":
            with self.transaction() as conn:
                row = self._existing(conn, review_id)
                doc = row.doc
                doc["publication"]["destinations"][0].pop("audience", None)
                self._save(conn, row, doc)
        return result


class ApproveReportsPublished(MapStore):
    def decide(
        self, principal: Principal, review_id: str, decision: str, expected_revision: str, comment: str | None
    ) -> JSON:
        result = super().decide(principal, review_id, decision, expected_revision, comment)
        return {**result, "state": "published"} if decision == "approve" else result


class RequestChangesReportsQueued(MapStore):
    def decide(
        self, principal: Principal, review_id: str, decision: str, expected_revision: str, comment: str | None
    ) -> JSON:
        result = super().decide(principal, review_id, decision, expected_revision, comment)
        return {**result, "state": "queued"} if decision == "request-changes" else result


class DeclineQueuesJob(MapStore):
    """Decline publishes anyway: it queues a job like an approval."""

    def commit_decision(self, conn: sqlite3.Connection, row: Row, decision: str, comment: str | None) -> None:
        super().commit_decision(conn, row, decision, comment)
        if decision == "decline":
            conn.execute(
                "INSERT INTO jobs (review_id, revision, snapshot) VALUES (?, ?, ?)",
                (row.review_id, row.revision, compact(self.job_snapshot(row))),
            )


class IdempotentReapprove(MapStore):
    """A repeated approval of an approved revision answers SUCCESS again (a replay, not a 409)."""

    def decide(
        self, principal: Principal, review_id: str, decision: str, expected_revision: str, comment: str | None
    ) -> JSON:
        with self._connection() as conn:
            row = self._row(conn, "review_id", review_id)
        if row and row.state == "queued" and decision == "approve" and row.revision == expected_revision:
            return {"review_id": review_id, "state": "queued"}
        return super().decide(principal, review_id, decision, expected_revision, comment)


class RefuseAfterCommit(MapStore):
    """The permission is checked after the decision is written: a 403 that keeps its effect."""

    def check_permission(self, row: Row, principal: Principal) -> None:
        return None

    def decide(
        self, principal: Principal, review_id: str, decision: str, expected_revision: str, comment: str | None
    ) -> JSON:
        result = super().decide(principal, review_id, decision, expected_revision, comment)
        with self._connection() as conn:
            row = self._row(conn, "review_id", review_id)
        if row is not None and principal.account in row.revoked:
            raise ServiceError(403, "permission_denied", "The account may no longer decide this review.")
        return result


class UnconditionalWrite(MapStore):
    """A decision without an expected revision (or an empty one) applies to whatever is current."""

    def check_revision(self, row: Row, expected_revision: str) -> None:
        if expected_revision:
            super().check_revision(row, expected_revision)


class TextDiffers(map_server.MapService):
    """The text block leaves out allowed_actions: it no longer mirrors structuredContent."""

    def read_text_block(self, document: str) -> str:
        doc = json.loads(document)
        doc.pop("allowed_actions", None)
        return compact(doc)


class NoOutputSchema(map_server.MapService):
    def tools(self) -> list[JSON]:
        return [{k: v for k, v in tool.items() if k != "outputSchema"} for tool in map_server.seed_tools()]


class _LenientComment(map_server.MapService):
    """Validates decide arguments against an altered view of the comment rule (the listing is the seed's)."""

    def visible_args(self, args: JSON) -> JSON:
        return args

    def validate(self, tool: str, validator: jsonschema.protocols.Validator, args: JSON) -> str | None:
        return super().validate(tool, validator, self.visible_args(args) if tool == "decide_review" else args)


class ApproveAcceptsComment(_LenientComment):
    def visible_args(self, args: JSON) -> JSON:
        if args.get("decision") in ("approve", "decline"):
            return {k: v for k, v in args.items() if k != "comment"}
        return args


class RequestChangesWithoutComment(_LenientComment):
    def visible_args(self, args: JSON) -> JSON:
        if args.get("decision") == "request-changes" and "comment" not in args:
            return {**args, "comment": "(none)"}
        return args


class Utf16CommentLength(map_server.MapService):
    """Counts the comment in UTF-16 code units, as a JavaScript `string.length` would."""

    def validate(self, tool: str, validator: jsonschema.protocols.Validator, args: JSON) -> str | None:
        comment = args.get("comment")
        if (
            tool == "decide_review"
            and isinstance(comment, str)
            and len(comment.encode("utf-16-le")) // 2 > 4096
        ):
            return "Invalid arguments for tool 'decide_review' at '/comment': longer than 4096 characters"
        return super().validate(tool, validator, args)


class TextOnlyErrors(map_server.MapService):
    """Refusals carry no structured code, only prose: a status found in text is weak evidence (C-1)."""

    def refusal(self, exc: ServiceError) -> types.CallToolResult:
        text = f"Error {exc.status}: {exc.code.replace('_', ' ')}"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


class _Listing(map_server.MapService):
    """Lists the tools differently from the seed; calls are still validated against the seed."""

    def change(self, tools: list[JSON]) -> list[JSON]:
        return tools

    def tools(self) -> list[JSON]:
        return self.change(json.loads(json.dumps(map_server.seed_tools())))


class ListedWithoutDecide(_Listing):
    def change(self, tools: list[JSON]) -> list[JSON]:
        return [t for t in tools if t["name"] != "decide_review"]


class ListsNoReviewTools(_Listing):
    """tools/list shows neither MAP tool (they are still callable): the profile is claimed, not shown."""

    def change(self, tools: list[JSON]) -> list[JSON]:
        return []


class LooseReadInput(_Listing):
    """read_review's input schema is open, and the service ignores members it does not know."""

    def change(self, tools: list[JSON]) -> list[JSON]:
        tools[0]["inputSchema"]["additionalProperties"] = True
        return tools

    def validate(self, tool: str, validator: jsonschema.protocols.Validator, args: JSON) -> str | None:
        if tool == "read_review":
            args = {k: v for k, v in args.items() if k == "reference"}
        return super().validate(tool, validator, args)


class DecideSchemaWithoutCommentRule(_Listing):
    def change(self, tools: list[JSON]) -> list[JSON]:
        tools[1]["inputSchema"].pop("allOf")
        return tools


class InvalidOutputSchema(_Listing):
    def change(self, tools: list[JSON]) -> list[JSON]:
        tools[0]["outputSchema"]["required"] = "review_id"
        return tools


class PublishAccepted(map_server.MapService):
    """The HTTP-native decision `publish` is taken as approve."""

    def validate(self, tool: str, validator: jsonschema.protocols.Validator, args: JSON) -> str | None:
        if tool == "decide_review" and args.get("decision") == "publish":
            args = {**args, "decision": "approve"}
        return super().validate(tool, validator, args)

    def decide_review(self, principal: Principal, args: JSON) -> JSON:
        if args.get("decision") == "publish":
            args = {**args, "decision": "approve"}
        return super().decide_review(principal, args)


class RevisionOptional(map_server.MapService):
    """expected_revision is neither required nor checked for emptiness (the store writes regardless)."""

    def validate(self, tool: str, validator: jsonschema.protocols.Validator, args: JSON) -> str | None:
        if tool == "decide_review" and not args.get("expected_revision"):
            args = {**args, "expected_revision": "unchecked"}
        return super().validate(tool, validator, args)

    def decide_review(self, principal: Principal, args: JSON) -> JSON:
        return super().decide_review(
            principal, {**args, "expected_revision": args.get("expected_revision", "")}
        )


class TermExpiry(MapStore):
    """Not a defect: a fresh review expires a term after it was created (48 h on the service clock, plus
    one second per review already created), so no two fresh reviews share an expires_at unless asked."""

    def create_review(self, params: JSON) -> JSON:
        if "expires_at" in params:
            return super().create_review(params)
        with self.transaction() as conn:
            now = self.now_ms(conn)
            count = conn.execute("SELECT COUNT(*) FROM reviews").fetchone()[0]
        term = now // 1000 * 1000 + 48 * 3_600_000 + int(count) * 1000
        return super().create_review({**params, "expires_at": format_instant(term)})


#: Conformant variants of the store: the suite must pass them.
VARIANT_STORES: dict[str, type[MapStore]] = {"term-expiry": TermExpiry}

STORES: dict[str, type[MapStore]] = {
    "lost-lock": LostLock,
    "commit-on-409": CommitOn409,
    "no-expiry": NoExpiry,
    "still-open-after-decision": StillOpenAfterDecision,
    "digest-without-final-newline": DigestWithoutFinalNewline,
    "recipient-not-enforced": RecipientNotEnforced,
    "tenant-not-enforced": TenantNotEnforced,
    "allowed-actions-not-enforced": AllowedActionsNotEnforced,
    "snapshot-from-current": SnapshotFromCurrent,
    "job-publishes-public": JobPublishesPublic,
    "stale-revision-accepted": StaleRevisionAccepted,
    "revocation-ignored": RevocationIgnored,
    "withdraw-ignored": WithdrawIgnored,
    "wrong-state": WrongState,
    "uw-digest-spelling": UwDigestSpelling,
    "leaky-refusal": LeakyRefusal,
    "reference-normalised": ReferenceNormalised,
    "unknown-action": UnknownAction,
    "fabricates-unknown": FabricatesUnknown,
    "revision-not-bumped": RevisionNotBumped,
    "restricted-without-audience": RestrictedWithoutAudience,
    "approve-reports-published": ApproveReportsPublished,
    "request-changes-reports-queued": RequestChangesReportsQueued,
    "decline-queues-job": DeclineQueuesJob,
    "idempotent-reapprove": IdempotentReapprove,
    "refuse-after-commit": RefuseAfterCommit,
}
SERVICES: dict[str, type[map_server.MapService]] = {
    "text-differs": TextDiffers,
    "no-output-schema": NoOutputSchema,
    "approve-accepts-comment": ApproveAcceptsComment,
    "request-changes-without-comment": RequestChangesWithoutComment,
    "utf16-comment-length": Utf16CommentLength,
    "text-only-errors": TextOnlyErrors,
    "listed-without-decide": ListedWithoutDecide,
    "lists-no-review-tools": ListsNoReviewTools,
    "loose-read-input": LooseReadInput,
    "decide-schema-without-comment-rule": DecideSchemaWithoutCommentRule,
    "invalid-output-schema": InvalidOutputSchema,
    "publish-accepted": PublishAccepted,
}
#: Defects that need a store and a service change together.
BOTH: dict[str, tuple[type[MapStore], type[map_server.MapService]]] = {
    "unconditional-write": (UnconditionalWrite, RevisionOptional),
}
DEFECTS = sorted([*STORES, *SERVICES, *BOTH])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.servers.map_mutants")
    parser.add_argument("--defect", choices=["none", *DEFECTS, *VARIANT_STORES], default="none")
    parser.add_argument("--controller", action="store_true", help="serve the fixture controller instead")
    parser.add_argument("--hooks", help="controller: offer only these hooks (comma-separated)")
    parser.add_argument(
        "--refuse", help="controller: answer `unsupported` to HOOK called with PARAM (HOOK:PARAM)"
    )
    args, rest = parser.parse_known_args(argv)
    store, service = BOTH.get(
        args.defect,
        (
            STORES.get(args.defect) or VARIANT_STORES.get(args.defect, MapStore),
            SERVICES.get(args.defect, map_server.MapService),
        ),
    )
    if args.controller:
        if args.hooks is None and args.refuse is None:
            return map_controller.main(rest, store_class=store)
        return _partial_controller(rest, store, args.hooks.split(",") if args.hooks else None, args.refuse)
    return map_server.main(rest, store_class=store, service_class=service)


def _partial_controller(
    rest: list[str], store: type[MapStore], hooks: list[str] | None, refuse: str | None
) -> int:
    """The reference controller with only `hooks` (all when None), one of them refusing one param."""
    options = map_controller.parse_args(rest)
    full = map_controller.build_controller(store(options.db, clock=options.clock))
    partial = Controller("partial MAP controller")
    refused_hook, _, refused_param = (refuse or "").partition(":")
    for name in hooks if hooks is not None else [h for h in full._hooks if h != "hello"]:
        hook = full._hooks[name]
        if name == refused_hook:
            hook = _refusing(hook, refused_param)
        partial.add(name, hook)
    return partial.serve_stdio()


def _refusing(hook: Any, param: str) -> Any:
    def refused(params: JSON) -> Any:
        if param in params:
            raise HookError("unsupported", f"this service cannot honour {param}")
        return hook(params)

    return refused


if __name__ == "__main__":
    sys.exit(main())
