"""State of the reference MAP review service: SQLite, an injectable clock, atomic decisions.

Why SQLite: the MAP seed promises that a decision "atomically enforces expected_revision, permission,
recipient relationship, expiry and state", and the harness proves that claim with racers that are
separate processes (one per stdio session) or concurrent HTTP requests. Only a real database shared by
those processes can make the reference honour it, so every decision is one `BEGIN IMMEDIATE`
transaction: it takes the write lock before it reads, compares and writes, and any other decision on any
connection waits (`busy_timeout`) until it commits. The clock lives in the same database, so the fixture
controller (another process) can move it for every server process at once.

This module imports no MCP code: the fixture controller (`map_controller`) uses it without paying for
the SDK's import.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sqlite3
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from conformance_reference.jsontext import compact
from conformance_reference.sqlite_store import FixtureError, SqliteStore

JSON = dict[str, Any]

#: The clock a fresh database starts with: before p7 expires (2026-10-03T08:00:00Z), so the seed's
#: approve -> queued exchange holds; it runs forward from there. `system` uses the real clock.
DEFAULT_CLOCK: Final = "2026-10-01T00:00:00Z"
PRIMARY_ACCOUNT: Final = "owner@example.net"
SECOND_ACCOUNT: Final = "other@example.net"
PRIMARY_TENANT: Final = "urn:example:tenant:7"
OTHER_TENANT: Final = "urn:example:tenant:8"
#: How a session says who acts: environment of a stdio process, headers of an HTTP request. Authentication
#: is out of the seed's scope ("account authorization are omitted"); the reference trusts these.
ENV_ACCOUNT: Final = "MAP_REFERENCE_ACCOUNT"
ENV_TENANT: Final = "MAP_REFERENCE_TENANT"
HEADER_ACCOUNT: Final = "X-Map-Account"
HEADER_TENANT: Final = "X-Map-Tenant"

OPEN: Final = "awaiting_review"
WITHDRAWN: Final = "withdrawn"
STATE_AFTER: Final = {"approve": "queued", "decline": "declined", "request-changes": "changes_requested"}
TERMS: Final = ("content_text", "destinations", "visibility", "schedule", "replaces_revision")

#: The seed's example review p7, in the seed's key order: read_review returns it byte for byte.
P7: Final[JSON] = {
    "review_id": "p7",
    "interaction": "urn:uuid:0199a6c2-4b1e-7c3a-9d2e-5f8a1b2c3d41",
    "service": {"id": "https://service.example", "tenant": "urn:example:tenant:7"},
    "addressed_to": "owner@example.net",
    "subject": {"id": "urn:example:object:42", "title": "Publish the getting started guide"},
    "contract": {
        "id": "https://mailschema.org/types/publication-approval",
        "version": "0.1",
        "contractDigest": "sha-256:de91a49de4cba91209be253456e7c56709791fff877a060560d4eada0cc9468c",
    },
    "reference": "urn:example:proposal:p7",
    "revision": "p7-r4",
    "expires_at": "2026-10-03T08:00:00Z",
    "allowed_actions": ["approve", "decline", "request-changes"],
    "publication": {
        "summary": "Publish the approved getting started guide.",
        "requester": "Documentation editor",
        "content": {
            "id": "urn:example:content:42",
            "revision": "r4",
            "title": "Getting started",
            "digest": "sha-256:4ffdf504c44a73a059c09c9cb30362c04f593b3af405b83bc084bb045067f95c",
        },
        "destinations": [
            {
                "id": "https://docs.service.example/guide",
                "account": "urn:example:account:7",
                "visibility": "public",
            }
        ],
        "schedule": {"mode": "immediate"},
    },
    "state": "awaiting_review",
    "content_artifact": {
        "media_type": "text/markdown",
        "text": "# Getting started\n\nCreate a workspace, connect your inbox and invite your team.\n",
    },
}
P7_GENERATION: Final = 4

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS reviews (
    review_id TEXT PRIMARY KEY,
    reference TEXT NOT NULL UNIQUE,
    account TEXT NOT NULL,
    tenant TEXT NOT NULL,
    state TEXT NOT NULL,
    revision TEXT NOT NULL,
    generation INTEGER NOT NULL,
    document TEXT NOT NULL,
    revoked TEXT NOT NULL DEFAULT '[]',
    decision TEXT,
    comment TEXT
);
CREATE TABLE IF NOT EXISTS jobs (
    job_id INTEGER PRIMARY KEY AUTOINCREMENT,
    review_id TEXT NOT NULL,
    revision TEXT NOT NULL,
    snapshot TEXT
);
CREATE TABLE IF NOT EXISTS clock (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    spec TEXT NOT NULL,
    offset_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""


class ServiceError(Exception):
    """A refused request, with the HTTP-equivalent status and the code the catalog's table maps (C-2)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    def body(self) -> JSON:
        return {"status": self.status, "code": self.code, "message": self.message}


@dataclass(frozen=True)
class Principal:
    account: str = PRIMARY_ACCOUNT
    tenant: str = PRIMARY_TENANT


@dataclass
class Row:
    review_id: str
    reference: str
    account: str
    tenant: str
    state: str
    revision: str
    generation: int
    document: str
    revoked: list[str]

    @property
    def doc(self) -> JSON:
        value: JSON = json.loads(self.document)
        return value


def parse_instant(text: str) -> int:
    """An RFC 3339 instant as integer milliseconds since the epoch (a naive value counts as UTC)."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)


def format_instant(ms: int, *, fraction: bool = False) -> str:
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    if fraction:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _real_ms() -> int:
    return time.time_ns() // 1_000_000


class MapStore(SqliteStore):
    """The review service's state and rules; subclass hooks (`check_*`, `content_digest`, ...) let the
    project's tests plant exactly one defect each without copying the service."""

    def __init__(self, path: str | None, *, clock: str = DEFAULT_CLOCK) -> None:
        if clock != "system":
            parse_instant(clock)  # fail fast on a bad --clock
        self.clock_spec = clock
        super().__init__(path)

    # ----------------------------------------------------------------- tables and seed data

    SCHEMA = _SCHEMA

    def _initialise(self, conn: sqlite3.Connection) -> None:
        if conn.execute("SELECT 1 FROM clock WHERE id = 1").fetchone() is None:
            conn.execute(
                "INSERT INTO clock (id, spec, offset_ms) VALUES (1, ?, ?)",
                (self.clock_spec, self._offset_for(self.clock_spec)),
            )
            self._seed(conn)

    def _seed(self, conn: sqlite3.Connection) -> None:
        self._insert(conn, P7, generation=P7_GENERATION)

    def _insert(self, conn: sqlite3.Connection, doc: JSON, *, generation: int) -> None:
        conn.execute(
            "INSERT INTO reviews (review_id, reference, account, tenant, state, revision, generation,"
            " document) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                doc["review_id"],
                doc["reference"],
                doc["addressed_to"],
                doc["service"].get("tenant", PRIMARY_TENANT),
                OPEN,
                doc["revision"],
                generation,
                compact(doc),
            ),
        )

    # ----------------------------------------------------------------- clock

    @staticmethod
    def _offset_for(spec: str) -> int:
        return 0 if spec == "system" else parse_instant(spec) - _real_ms()

    def now_ms(self, conn: sqlite3.Connection) -> int:
        row = conn.execute("SELECT offset_ms FROM clock WHERE id = 1").fetchone()
        return _real_ms() + (int(row[0]) if row else 0)

    # ----------------------------------------------------------------- rows

    def _row(self, conn: sqlite3.Connection, column: str, value: str) -> Row | None:
        assert column in ("review_id", "reference")
        found = conn.execute(
            "SELECT review_id, reference, account, tenant, state, revision, generation, document, revoked"
            f" FROM reviews WHERE {column} = ?",
            (value,),
        ).fetchone()
        if found is None:
            return None
        rid, reference, account, tenant, state, revision, generation, document, revoked = found
        return Row(
            rid, reference, account, tenant, state, revision, generation, document, json.loads(revoked)
        )

    def _save(self, conn: sqlite3.Connection, row: Row, doc: JSON) -> None:
        conn.execute(
            "UPDATE reviews SET document = ?, revision = ?, generation = ? WHERE review_id = ?",
            (compact(doc), doc["revision"], row.generation, row.review_id),
        )

    # ----------------------------------------------------------------- the service

    def visible(self, row: Row, principal: Principal) -> bool:
        """Reads and decisions are limited to reviews offered to the acting account in its tenant."""
        return row.account == principal.account and row.tenant == principal.tenant

    def read(self, principal: Principal, reference: str) -> str:
        """The open review's document (compact JSON) or a ServiceError; one consistent snapshot."""
        with self._connection() as conn:
            conn.execute("BEGIN")
            try:
                row = self._row(conn, "reference", reference)
                if row is None or not self.visible(row, principal):
                    raise ServiceError(
                        404, "not_found", "No review is offered to this account under that reference."
                    )
                self.check_open(row)
                self.check_expiry(row, self.now_ms(conn))
                return self.read_document(row)
            finally:
                conn.execute("COMMIT")

    def read_document(self, row: Row) -> str:
        return row.document

    def decide(
        self, principal: Principal, review_id: str, decision: str, expected_revision: str, comment: str | None
    ) -> JSON:
        """The atomic compare-and-set: every rule is checked and the effect written in one transaction."""
        with self.transaction() as conn:
            row = self._row(conn, "review_id", review_id)
            self.guard(conn, row, principal, decision, expected_revision)
            assert row is not None
            self.commit_decision(conn, row, decision, comment)
        return {"review_id": review_id, "state": STATE_AFTER[decision]}

    def guard(
        self,
        conn: sqlite3.Connection,
        row: Row | None,
        principal: Principal,
        decision: str,
        expected_revision: str,
    ) -> None:
        """Raise the ServiceError a decision meets first; the order decides which one a client sees."""
        if row is None or not self.check_recipient(row, principal):
            raise ServiceError(404, "not_found", "No review is offered to this account under that id.")
        self.check_open(row)
        self.check_expiry(row, self.now_ms(conn))
        self.check_revision(row, expected_revision)
        self.check_permission(row, principal)
        self.check_allowed(row, decision)

    def check_recipient(self, row: Row, principal: Principal) -> bool:
        return self.visible(row, principal)

    def check_open(self, row: Row) -> None:
        if row.state == WITHDRAWN:
            raise ServiceError(409, "withdrawn", "The review was withdrawn.")
        if row.state != OPEN:
            raise ServiceError(409, "already_decided", "The review was already decided.")

    def check_expiry(self, row: Row, now_ms: int) -> None:
        """Expired at or after expires_at (gap rule G-M5: the consumer must not act at or after it)."""
        if now_ms >= parse_instant(row.doc["expires_at"]):
            raise ServiceError(410, "expired", "The review expired.")

    def check_revision(self, row: Row, expected_revision: str) -> None:
        if expected_revision != row.revision:
            raise ServiceError(
                409, "stale_revision", "expected_revision is not the review's current revision."
            )

    def check_permission(self, row: Row, principal: Principal) -> None:
        if principal.account in row.revoked:
            raise ServiceError(403, "permission_denied", "The account may no longer decide this review.")

    def check_allowed(self, row: Row, decision: str) -> None:
        if decision not in row.doc["allowed_actions"]:
            raise ServiceError(403, "forbidden", "This decision is not among the review's allowed actions.")

    def commit_decision(self, conn: sqlite3.Connection, row: Row, decision: str, comment: str | None) -> None:
        conn.execute(
            "UPDATE reviews SET state = ?, decision = ?, comment = ? WHERE review_id = ?",
            (STATE_AFTER[decision], decision, comment, row.review_id),
        )
        if decision == "approve":
            snapshot = self.job_snapshot(row)
            conn.execute(
                "INSERT INTO jobs (review_id, revision, snapshot) VALUES (?, ?, ?)",
                (row.review_id, row.revision, None if snapshot is None else compact(snapshot)),
            )

    def job_snapshot(self, row: Row) -> JSON | None:
        """What approve queues: the exact terms of the approved revision, frozen in the job."""
        return _snapshot_of(row.doc)

    def content_digest(self, text: str) -> str:
        """The content digest covers the artifact's exact UTF-8 bytes, final newline included."""
        return "sha-256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()

    # ----------------------------------------------------------------- fixture hooks

    def reset(self) -> JSON:
        with self.transaction() as conn:
            conn.execute("DELETE FROM reviews")
            conn.execute("DELETE FROM jobs")
            conn.execute("UPDATE clock SET offset_ms = ? WHERE id = 1", (self._default_offset(conn),))
            self._seed(conn)
        return {}

    def _default_offset(self, conn: sqlite3.Connection) -> int:
        spec = conn.execute("SELECT spec FROM clock WHERE id = 1").fetchone()[0]
        return self._offset_for(str(spec))

    def create_review(self, params: JSON) -> JSON:
        account = {"primary": PRIMARY_ACCOUNT, "second": SECOND_ACCOUNT}[params.get("account", "primary")]
        tenant = {"primary": PRIMARY_TENANT, "other": OTHER_TENANT}[params.get("tenant", "primary")]
        text = params.get("content_text", P7["content_artifact"]["text"])
        with self.transaction() as conn:
            number = self._next(conn, "review")
            rid = f"rv-{number}"
            doc = copy.deepcopy(P7)
            doc["review_id"] = rid
            doc["interaction"] = f"urn:uuid:{uuid.uuid4()}"
            doc["service"]["tenant"] = tenant
            doc["addressed_to"] = account
            doc["subject"] = {
                "id": f"urn:example:object:{rid}",
                "title": params.get("title", P7["subject"]["title"]),
            }
            doc["reference"] = f"urn:example:proposal:{rid}"
            doc["revision"] = f"{rid}-r1"
            if "expires_at" in params:
                doc["expires_at"] = format_instant(parse_instant(params["expires_at"]) // 1000 * 1000)
            if "allowed_actions" in params:
                doc["allowed_actions"] = list(params["allowed_actions"])
            content = doc["publication"]["content"]
            content["id"] = f"urn:example:content:{rid}"
            content["revision"] = "r1"
            content["digest"] = self.content_digest(text)
            doc["content_artifact"]["text"] = text
            self._insert(conn, doc, generation=1)
        return {"review_id": rid, "reference": doc["reference"], "revision": doc["revision"]}

    def _next(self, conn: sqlite3.Connection, name: str) -> int:
        conn.execute(
            "INSERT INTO counters (name, value) VALUES (?, 1)"
            " ON CONFLICT(name) DO UPDATE SET value = value + 1",
            (name,),
        )
        return int(conn.execute("SELECT value FROM counters WHERE name = ?", (name,)).fetchone()[0])

    def _existing(self, conn: sqlite3.Connection, review_id: Any) -> Row:
        row = self._row(conn, "review_id", str(review_id)) if isinstance(review_id, str) else None
        if row is None:
            raise FixtureError("not_found", f"no review {review_id!r}")
        return row

    def mutate_terms(self, review_id: str, term: str) -> JSON:
        """Change one action-relevant term as its source would; every change makes a new revision."""
        if term not in TERMS:
            raise FixtureError("unsupported", f"term {term!r} is not one of {', '.join(TERMS)}")
        with self.transaction() as conn:
            row = self._existing(conn, review_id)
            doc = row.doc
            row.generation += 1
            generation = row.generation
            publication = doc["publication"]
            destinations = publication["destinations"]
            if term == "content_text":
                text = doc["content_artifact"]["text"] + f"Revision {generation} adds this line.\n"
                doc["content_artifact"]["text"] = text
                publication["content"]["revision"] = f"r{generation}"
                publication["content"]["digest"] = self.content_digest(text)
            elif term == "destinations":
                extra = {
                    "id": f"https://docs.service.example/guide-{generation}",
                    "account": "urn:example:account:7",
                    "visibility": "public",
                }
                destinations[min(len(destinations), 31) :] = [extra]
            elif term == "visibility":
                first = destinations[0]
                restricted = first["visibility"] != "restricted"
                changed = {"id": first["id"], "account": first["account"]}
                changed["visibility"] = "restricted" if restricted else "public"
                if restricted:
                    changed["audience"] = {"id": "urn:example:audience:team-7", "revision": f"a{generation}"}
                if "replacesRevision" in first:
                    changed["replacesRevision"] = first["replacesRevision"]
                destinations[0] = changed
            elif term == "schedule":
                immediate = publication["schedule"].get("mode") == "immediate"
                publication["schedule"] = (
                    {"mode": "scheduled", "at": "2026-10-05T09:00:00Z"}
                    if immediate
                    else {"mode": "immediate"}
                )
            else:
                destinations[0]["replacesRevision"] = f"published-{generation}"
            doc["revision"] = f"{row.review_id}-r{generation}"
            self._save(conn, row, doc)
        return {"revision": doc["revision"]}

    def withdraw(self, review_id: str) -> JSON:
        with self.transaction() as conn:
            row = self._existing(conn, review_id)
            if row.state == OPEN:
                conn.execute("UPDATE reviews SET state = ? WHERE review_id = ?", (WITHDRAWN, row.review_id))
        return {}

    def expire(self, review_id: str) -> JSON:
        """Make the review expired now: expires_at becomes the current second (now >= expires_at)."""
        with self.transaction() as conn:
            row = self._existing(conn, review_id)
            doc = row.doc
            doc["expires_at"] = format_instant(self.now_ms(conn) // 1000 * 1000)
            self._save(conn, row, doc)
        return {"expires_at": doc["expires_at"]}

    def set_clock(self, now: str | None) -> JSON:
        with self.transaction() as conn:
            offset = self._default_offset(conn) if now is None else parse_instant(now) - _real_ms()
            conn.execute("UPDATE clock SET offset_ms = ? WHERE id = 1", (offset,))
            current = self.now_ms(conn)
        return {"now": format_instant(current, fraction=True)}

    def revoke_permission(self, review_id: str, role: str) -> JSON:
        account = {"primary": PRIMARY_ACCOUNT, "second": SECOND_ACCOUNT}[role]
        with self.transaction() as conn:
            row = self._existing(conn, review_id)
            revoked = sorted({*row.revoked, account})
            conn.execute(
                "UPDATE reviews SET revoked = ? WHERE review_id = ?", (json.dumps(revoked), row.review_id)
            )
        return {}

    def review_state(self, review_id: str) -> JSON:
        with self._connection() as conn:
            row = self._existing(conn, review_id)
        return {"state": row.state, "revision": row.revision}

    def publication_jobs(self, review_id: str) -> JSON:
        """The oracle: every queued job with the snapshot the publisher will use."""
        with self._connection() as conn:
            row = self._existing(conn, review_id)
            found = conn.execute(
                "SELECT revision, snapshot FROM jobs WHERE review_id = ? ORDER BY job_id", (row.review_id,)
            ).fetchall()
        jobs = []
        for revision, snapshot in found:
            # A job without a frozen snapshot would publish whatever the review says now.
            jobs.append(
                {"revision": revision, **(json.loads(snapshot) if snapshot else _snapshot_of(row.doc))}
            )
        return {"jobs": jobs}


def _snapshot_of(doc: JSON) -> JSON:
    publication = doc["publication"]
    return {
        "content_digest": publication["content"]["digest"],
        "content_text": doc["content_artifact"]["text"],
        "destinations": copy.deepcopy(publication["destinations"]),
        "schedule": copy.deepcopy(publication["schedule"]),
    }
