"""State and rules of the reference UW Markdown binding: deals in SQLite, grants per principal, the Tier-2
editor with strong If-Match, the validator.

Why SQLite: the binding promises that "a successful first call changes the ETag and a duplicate call then
fails 412", and the harness proves it with racers that are separate processes (one per stdio session) or
concurrent HTTP requests. Only a database shared by those processes can make that hold, so every edit is
one `BEGIN IMMEDIATE` transaction that reads the deal, compares If-Match with the current semantic digest,
applies the operation and writes, with the write lock held from the first read to the commit.

Deals are stored as the bytes of one representation and decoded on every access through
`uwmd_codecs.decode`, the one place with the size, UTF-8, XML entity, digest and ZIP limits. Deal ids are
opaque keys of a table: no id or URI is ever turned into a file path.

This module imports no MCP code: the fixture controller (`uwmd_controller`) uses it without the SDK.
"""

from __future__ import annotations

import copy
import json
import sqlite3
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from conformance_reference import uwmd_codecs as codecs
from conformance_reference.sqlite_store import FixtureError, SqliteStore
from conformance_reference.uwmd_codecs import CodecError

JSON = dict[str, Any]

PRIMARY: Final = "analyst@tenant-a.example"
SECOND: Final = "analyst@tenant-b.example"
TENANTS: Final = {PRIMARY: "tenant-a", SECOND: "tenant-b"}
ROLES: Final = {"primary": PRIMARY, "second": SECOND}
TENANT_ROLES: Final = {"primary": "tenant-a", "other": "tenant-b"}
#: How a session says who acts: the environment (or `--principal`) of a stdio process, a header of an HTTP
#: request. The binding leaves authentication to the host (§7); the reference trusts these.
ENV_PRINCIPAL: Final = "UWMD_REFERENCE_PRINCIPAL"
HEADER_PRINCIPAL: Final = "X-Uwmd-Principal"
ALL: Final = "*"
MAX_ID: Final = 200
#: Frontmatter fields an edit may never change (UW Protocol §V.6).
IMMUTABLE: Final = frozenset({"uw_version", "deal_id", "created"})
CONFIDENCE: Final = ("high", "medium", "low")

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS deals (
    deal_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    representation TEXT NOT NULL,
    body BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS grants (
    principal TEXT NOT NULL,
    deal_id TEXT NOT NULL,
    variants TEXT NOT NULL,
    PRIMARY KEY (principal, deal_id)
);
CREATE TABLE IF NOT EXISTS seeded (id INTEGER PRIMARY KEY CHECK (id = 1));
"""


class ServiceError(Exception):
    """A refused request: its HTTP-equivalent status, a code the catalog's C-2 table maps, a message that
    never quotes a document body, and details (precondition facts, retryability)."""

    def __init__(self, status: int, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = details

    @classmethod
    def of(cls, exc: CodecError) -> ServiceError:
        return cls(exc.status, exc.code, exc.message)

    def body(self) -> JSON:
        return {
            "ok": False,
            "code": self.code,
            "status": self.status,
            "message": self.message,
            **self.details,
        }


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def format_instant(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def parse_instant(text: str) -> int | None:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1000)


def example_deals() -> list[JSON]:
    """The project's example deals (vectors/uwmd/deals.json): what a fresh database is seeded with."""
    from conformance.model import vectors

    return [v for v in vectors.load("uwmd", "deals.json") if v.get("kind") == "deal"]


@dataclass
class Row:
    deal_id: str
    tenant: str
    representation: str
    body: bytes


@dataclass
class Fetched:
    """A decoded deal as one principal may see it."""

    row: Row
    envelope: JSON
    digest: str


class UwmdStore(SqliteStore):
    """Deals, grants and every rule of the binding; the hooks (`authorize`, `check_if_match`, `decode`, ...)
    let the project's tests plant exactly one defect each without copying the service."""

    # ----------------------------------------------------------------- tables and seed data

    SCHEMA = _SCHEMA

    def _initialise(self, conn: sqlite3.Connection) -> None:
        if conn.execute("SELECT 1 FROM seeded WHERE id = 1").fetchone() is None:
            self._seed(conn)
            conn.execute("INSERT INTO seeded (id) VALUES (1)")

    def _seed(self, conn: sqlite3.Connection) -> None:
        for vector in example_deals():
            tenant = TENANT_ROLES[vector["tenant"]]
            self._store(conn, vector["document"], tenant)

    def _store(self, conn: sqlite3.Connection, envelope: JSON, tenant: str) -> str:
        """Store an envelope as uw-json (stamped now) and grant its tenant's principal every variant."""
        deal_id = envelope["frontmatter"]["deal_id"]
        body = self.encode_json(envelope)
        conn.execute(
            "INSERT OR REPLACE INTO deals (deal_id, tenant, representation, body) VALUES (?, ?, ?, ?)",
            (deal_id, tenant, "uw-json", body),
        )
        self._grant_tenant(conn, deal_id, tenant)
        return deal_id

    def _grant_tenant(self, conn: sqlite3.Connection, deal_id: str, tenant: str) -> None:
        conn.execute("DELETE FROM grants WHERE deal_id = ?", (deal_id,))
        for principal, owner in TENANTS.items():
            if owner == tenant:
                conn.execute(
                    "INSERT INTO grants (principal, deal_id, variants) VALUES (?, ?, ?)",
                    (principal, deal_id, json.dumps([ALL])),
                )

    def encode_json(self, envelope: JSON) -> bytes:
        stamped = codecs.stamp(envelope, format_instant(now_ms()))
        return str(codecs.encode("uw-json", stamped)).encode("utf-8")

    # ----------------------------------------------------------------- reading

    def _row(self, conn: sqlite3.Connection, deal_id: str) -> Row | None:
        found = conn.execute(
            "SELECT deal_id, tenant, representation, body FROM deals WHERE deal_id = ?", (deal_id,)
        ).fetchone()
        return None if found is None else Row(found[0], found[1], found[2], bytes(found[3]))

    def variants(self, conn: sqlite3.Connection, principal: str, deal_id: str) -> list[str] | None:
        found = conn.execute(
            "SELECT variants FROM grants WHERE principal = ? AND deal_id = ?", (principal, deal_id)
        ).fetchone()
        if found is None:
            return None
        value: list[str] = json.loads(found[0])
        return value

    def authorize(self, conn: sqlite3.Connection, row: Row | None, principal: str, variant: str) -> Row:
        """Both the deal and the requested variant (§7: "deal_id is not an authorization boundary").

        A principal with no grant on the deal learns nothing, not even that it exists (404, exactly as for
        an unknown id); one with a grant that does not cover the variant is refused 403.
        """
        granted = self.variants(conn, principal, row.deal_id) if row is not None else None
        if row is None or granted is None:
            raise ServiceError(404, "DEAL_NOT_FOUND", "No deal with this id is available to this principal.")
        if ALL not in granted and variant not in granted:
            raise ServiceError(
                403, "permission_denied", f"This principal may not read the {variant} variant of this deal."
            )
        return row

    def decode(self, row: Row) -> tuple[JSON, str]:
        """The stored bytes through the codecs' protections; a refusal keeps its status and code."""
        try:
            return codecs.decode(row.representation, row.body)
        except CodecError as exc:
            raise ServiceError.of(exc) from None

    def fetch(self, principal: str, deal_id: str, variant: str) -> Fetched:
        with self.snapshot() as conn:
            row = self.authorize(conn, self._row(conn, deal_id), principal, variant)
        envelope, digest = self.decode(row)
        return Fetched(row, envelope, digest)

    def visible(self, principal: str) -> list[str]:
        with self._connection() as conn:
            found = conn.execute(
                "SELECT deal_id FROM grants WHERE principal = ? ORDER BY deal_id", (principal,)
            ).fetchall()
        return [str(r[0]) for r in found]

    # ----------------------------------------------------------------- apply_edit

    def apply_edit(self, principal: str, deal_id: str, if_match: Any, operation: JSON, context: JSON) -> JSON:
        """The atomic compare-and-set: authorize, check If-Match, edit and write in one transaction."""
        with self.transaction() as conn:
            row = self.authorize(conn, self._row(conn, deal_id), principal, "uw-json")
            self.require_if_match(if_match)
            envelope, digest = self.decode(row)
            self.check_if_match(str(if_match), digest)
            receipt = self.commit_edit(conn, row, envelope, operation, context)
        return receipt

    def require_if_match(self, if_match: Any) -> None:
        if not isinstance(if_match, str) or not if_match.strip():
            raise ServiceError(
                428,
                "BINDING_PRECONDITION_REQUIRED",
                "If-Match is required for this write: send the current ETag (the quoted semantic digest).",
                retryable=True,
                precondition={"required": "if_match", "expected": 'a strong ETag "sha256:<hex>"'},
            )

    def check_if_match(self, if_match: str, digest: str) -> None:
        """Strong comparison (RFC 9110 §8.8.3.2): a weak tag never matches; `*` matches any current deal."""
        current = codecs.etag(digest)
        given = if_match.strip()
        if given == "*" or given == current:
            return
        raise ServiceError(
            412,
            "BINDING_PRECONDITION_FAILED",
            "If-Match does not match the current semantic digest; read the deal again and retry.",
            retryable=True,
            current_etag=current,
            precondition={"if_match": given[:120], "current_etag": current, "comparison": "strong"},
        )

    def commit_edit(
        self, conn: sqlite3.Connection, row: Row, envelope: JSON, operation: JSON, context: JSON
    ) -> JSON:
        edited, receipt = Editor(self.edit_instant(envelope)).apply(envelope, operation, context)
        try:
            body = self.encode_json(edited)
        except (ValueError, TypeError, RecursionError):
            raise ServiceError(
                400,
                "BINDING_EDIT_INVALID",
                "The edited document has no canonical form (a value JSON cannot carry).",
            ) from None
        try:
            codecs.decode("uw-json", body)  # the size and shape limits apply to what an edit writes too
        except CodecError as exc:
            raise ServiceError.of(exc) from None
        self.write(conn, row, body)
        digest = codecs.semantic_digest(edited)
        return {
            "ok": True,
            "deal_id": row.deal_id,
            "resource_uri": codecs.resource_uri(row.deal_id),
            "semantic_digest": digest,
            "etag": codecs.etag(digest),
            **receipt,
        }

    def write(self, conn: sqlite3.Connection, row: Row, body: bytes) -> None:
        conn.execute(
            "UPDATE deals SET representation = 'uw-json', body = ? WHERE deal_id = ?", (body, row.deal_id)
        )

    def edit_instant(self, envelope: JSON) -> str:
        """Now, in milliseconds, and always later than the deal's last_modified: two edits in one
        millisecond still make two different documents (an edit is not idempotent)."""
        last = parse_instant(str(envelope.get("frontmatter", {}).get("last_modified", "")))
        moment = now_ms()
        if last is not None and moment <= last:
            moment = last + 1
        return format_instant(moment)

    # ----------------------------------------------------------------- fixture hooks

    def reset(self) -> JSON:
        with self.transaction() as conn:
            conn.execute("DELETE FROM deals")
            conn.execute("DELETE FROM grants")
            self._seed(conn)
        return {}

    def load_deal(self, document: Any, deal_id: Any, tenant_role: Any) -> JSON:
        if not isinstance(document, dict):
            raise FixtureError("invalid_params", "document must be a UW Document Envelope object")
        tenant = TENANT_ROLES.get(tenant_role if isinstance(tenant_role, str) else "")
        if tenant is None:
            raise FixtureError("unsupported", "tenant must be 'primary' or 'other'")
        envelope = copy.deepcopy(document)
        try:
            codecs.check_envelope(envelope)
        except CodecError as exc:
            raise FixtureError("invalid_params", exc.message) from None
        if deal_id is not None:
            if not isinstance(deal_id, str) or not deal_id or len(deal_id) > MAX_ID:
                raise FixtureError("invalid_params", f"deal_id must be a string of 1 to {MAX_ID} characters")
            envelope["frontmatter"]["deal_id"] = deal_id
        with self.transaction() as conn:
            stored = self._store(conn, envelope, tenant)
        return {
            "deal_id": stored,
            "resource_uri": codecs.resource_uri(stored),
            "semantic_digest": codecs.semantic_digest(envelope),
        }

    def load_representation(self, deal_id: Any, representation: Any, body: bytes, tenant_role: Any) -> JSON:
        """Store raw bytes as a deal's source representation, unchecked: the hostile-input fixture."""
        if not isinstance(deal_id, str) or not deal_id or len(deal_id) > MAX_ID:
            raise FixtureError("invalid_params", f"deal_id must be a string of 1 to {MAX_ID} characters")
        if representation not in codecs.REPRESENTATIONS:
            raise FixtureError(
                "unsupported", f"representation must be one of {', '.join(codecs.REPRESENTATIONS)}"
            )
        tenant = TENANT_ROLES.get(tenant_role if isinstance(tenant_role, str) else "")
        if tenant is None:
            raise FixtureError("unsupported", "tenant must be 'primary' or 'other'")
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO deals (deal_id, tenant, representation, body) VALUES (?, ?, ?, ?)",
                (deal_id, tenant, representation, body),
            )
            self._grant_tenant(conn, deal_id, tenant)
        return {"deal_id": deal_id, "resource_uri": codecs.resource_uri(deal_id)}

    def grant(self, principal_role: Any, deal_id: Any, variants: Any) -> JSON:
        principal = ROLES.get(principal_role if isinstance(principal_role, str) else "")
        if principal is None:
            raise FixtureError("unsupported", "principal must be 'primary' or 'second'")
        known = {*codecs.REPRESENTATIONS, *codecs.VIEWS, ALL}
        if not isinstance(variants, list) or not all(isinstance(v, str) and v in known for v in variants):
            raise FixtureError(
                "invalid_params", "representations must list representation ids, view names or '*'"
            )
        with self.transaction() as conn:
            if not isinstance(deal_id, str) or self._row(conn, deal_id) is None:
                raise FixtureError("not_found", "no such deal")
            if variants:
                conn.execute(
                    "INSERT OR REPLACE INTO grants (principal, deal_id, variants) VALUES (?, ?, ?)",
                    (principal, deal_id, json.dumps(sorted(set(variants)))),
                )
            else:
                conn.execute("DELETE FROM grants WHERE principal = ? AND deal_id = ?", (principal, deal_id))
        return {}


# --------------------------------------------------------------------------- the Tier-2 editor


def source_permitted(source: str) -> bool:
    """The edit policy's source classes: people, the wizard, the engine, agents, imports, the system."""
    if source in ("user", "wizard", "system", "import"):
        return True
    return source.startswith(("wizard:", "engine:", "agent/", "agent:", "import:"))


def supersede_on_edit(source: str) -> bool:
    """Agent-written blocks are never overwritten in place: a change supersedes them (Protocol §V)."""
    return source.startswith(("agent/", "agent:"))


class Editor:
    """Applies one EditOperation (already schema-valid) to a copy of an envelope, with the edit policy."""

    def __init__(self, instant: str) -> None:
        self.instant = instant

    def apply(self, envelope: JSON, operation: JSON, context: JSON) -> tuple[JSON, JSON]:
        edited = copy.deepcopy(envelope)
        source = context.get("source")
        if not isinstance(source, str) or not source_permitted(source):
            raise ServiceError(
                409, "PROTO-EDIT-005", "The actor context's source is not permitted by the edit policy."
            )
        kind = operation.get("kind")
        if kind == "frontmatter_set":
            receipt = self.frontmatter_set(edited, operation)
        elif kind == "section_replace":
            receipt = self.section_replace(edited, operation, context)
        elif kind == "section_supersede":
            receipt = self.section_supersede(edited, operation, context)
        elif kind == "pipeline_log_append":
            receipt = self.pipeline_log_append(edited, operation, context)
        else:
            raise ServiceError(
                400, "BINDING_OPERATION_INVALID", "The operation kind is not an EditOperation kind."
            )
        edited["frontmatter"]["last_modified"] = self.instant
        return edited, receipt

    def frontmatter_set(self, envelope: JSON, operation: JSON) -> JSON:
        path = str(operation["path"])
        parts = path.split(".")
        if any(not p for p in parts):
            raise ServiceError(400, "BINDING_PATH_INVALID", "The frontmatter path has an empty segment.")
        if parts[0] in IMMUTABLE:
            raise ServiceError(409, "PROTO-EDIT-002", f"The frontmatter field {parts[0]} is immutable.")
        node: Any = envelope["frontmatter"]
        for part in parts[:-1]:
            node = node.setdefault(part, {}) if isinstance(node, dict) else None
            if not isinstance(node, dict):
                raise ServiceError(
                    409, "PROTO-EDIT-006", "The frontmatter path runs through a non-object value."
                )
        node[parts[-1]] = copy.deepcopy(operation["value"])
        return {"superseded_prior_block": False}

    def _locate(self, envelope: JSON, operation: JSON) -> tuple[JSON, str, str]:
        """(the container holding the block, its key there, the superseded-list key) for a section op."""
        sections: JSON = envelope["sections"]
        section_id = str(operation["section_id"])
        variant = operation.get("variant")
        current = sections.get(section_id)
        if variant is None:
            if (
                isinstance(current, dict)
                and current
                and not ("annotation" in current and "content" in current)
            ):
                raise ServiceError(
                    409, "PROTO-EDIT-004", "The section has variants: name the variant to edit."
                )
            return sections, section_id, section_id
        if current is None:
            current = sections[section_id] = {}
        if not isinstance(current, dict) or ("annotation" in current and "content" in current):
            raise ServiceError(409, "PROTO-EDIT-004", "The section has no variants.")
        return current, str(variant), f"{section_id}.{variant}"

    def _meta(self, section: str, version: int, operation: JSON, context: JSON, old: JSON | None) -> JSON:
        given = operation.get("meta") or {}
        source = given.get("source", context.get("source"))
        if not isinstance(source, str) or not source_permitted(source):
            raise ServiceError(
                409, "PROTO-EDIT-005", "The block's source is not permitted by the edit policy."
            )
        confidence = given.get(
            "confidence", context.get("confidence", (old or {}).get("confidence", "medium"))
        )
        if confidence not in CONFIDENCE:
            raise ServiceError(400, "BINDING_META_INVALID", "confidence must be high, medium or low.")
        actor = given.get("actor", context.get("actor"))
        if not isinstance(actor, str) or not actor:
            raise ServiceError(400, "BINDING_META_INVALID", "The block needs an actor.")
        return {
            "section": section,
            "version": version,
            "superseded": False,
            "source": source,
            "agent_id": given.get("agent_id", context.get("agent_id")),
            "agent_version": given.get("agent_version", context.get("agent_version")),
            "actor": actor,
            "timestamp": self.instant,
            "confidence": confidence,
            "human_review_required": bool(given.get("human_review_required", False)),
            "flags": [str(f) for f in given.get("flags", [])]
            if isinstance(given.get("flags", []), list)
            else [],
            "input_hash": given.get("input_hash"),
            "notes": given.get("notes"),
        }

    def _block(self, section: str, meta: JSON, content: JSON, prose: str | None) -> JSON:
        body = {k: copy.deepcopy(v) for k, v in content.items() if k != "_meta"}
        annotation = {
            "section": section,
            "source": meta["source"],
            "ts": meta["timestamp"],
            "v": meta["version"],
            "confidence": meta["confidence"],
        }
        block: JSON = {"annotation": annotation, "content": {"_meta": meta, **body}}
        if prose is not None:
            block["prose"] = prose
        return block

    def section_replace(self, envelope: JSON, operation: JSON, context: JSON) -> JSON:
        container, key, _ = self._locate(envelope, operation)
        old = container.get(key)
        if not isinstance(old, dict) or "content" not in old:
            raise ServiceError(409, "PROTO-EDIT-004", "There is no block to replace; use section_supersede.")
        old_meta = old["content"].get("_meta") if isinstance(old["content"], dict) else None
        old_meta = old_meta if isinstance(old_meta, dict) else {}
        new_source = (operation.get("meta") or {}).get("source", context.get("source"))
        if supersede_on_edit(str(old_meta.get("source", ""))) or supersede_on_edit(str(new_source)):
            raise ServiceError(
                409,
                "PROTO-EDIT-001",
                "This block's source supersedes on edit: it cannot be replaced in place;"
                " use section_supersede.",
            )
        version = int(old_meta.get("version", 1)) if isinstance(old_meta.get("version", 1), int) else 1
        section = str(operation["section_id"])
        meta = self._meta(section, version, operation, context, old_meta)
        container[key] = self._block(section, meta, operation["content"], old.get("prose"))
        return {"superseded_prior_block": False}

    def section_supersede(self, envelope: JSON, operation: JSON, context: JSON) -> JSON:
        container, key, history = self._locate(envelope, operation)
        old = container.get(key)
        section = str(operation["section_id"])
        prior = 0
        if isinstance(old, dict) and isinstance(old.get("content"), dict):
            old_meta = old["content"].get("_meta")
            if isinstance(old_meta, dict) and isinstance(old_meta.get("version"), int):
                prior = old_meta["version"]
            retired = copy.deepcopy(old)
            if isinstance(retired["content"].get("_meta"), dict):
                retired["content"]["_meta"]["superseded"] = True
            envelope.setdefault("superseded", {}).setdefault(history, []).append(retired)
            prior = max(prior, 1)
        meta = self._meta(section, prior + 1, operation, context, None)
        prose = old.get("prose") if isinstance(old, dict) else None
        container[key] = self._block(section, meta, operation["content"], prose)
        return {"superseded_prior_block": prior > 0, "new_version": prior + 1}

    def pipeline_log_append(self, envelope: JSON, operation: JSON, context: JSON) -> JSON:
        meta = self._meta("pipeline_log", 1, {"meta": {}}, context, None)
        log = envelope.setdefault("pipeline_log", [])
        log.append(self._block("pipeline_log", meta, {"entries": [copy.deepcopy(operation["entry"])]}, None))
        return {"superseded_prior_block": False}


# --------------------------------------------------------------------------- the validator


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _content(envelope: JSON, section: str) -> JSON | None:
    block = envelope.get("sections", {}).get(section)
    if isinstance(block, dict) and isinstance(block.get("content"), dict):
        content: JSON = block["content"]
        return content
    return None


def validate(envelope: JSON) -> JSON:
    """Issues of the current envelope: cross-checks (CC-*), financial validity (FV_*), metadata (META_*).

    Messages carry field names and numbers only, never prose or section text.
    """
    issues: list[JSON] = []

    def issue(code: str, severity: str, message: str, pointer: str) -> None:
        issues.append({"code": code, "severity": severity, "message": message, "pointer": pointer})

    front = envelope.get("frontmatter", {})
    for name in ("uw_version", "deal_id", "deal_name", "created"):
        if not isinstance(front.get(name), str):
            issue("META_MISSING_FIELD", "error", f"The frontmatter lacks {name}.", f"frontmatter.{name}")
    metrics = front.get("quick_metrics") if isinstance(front.get("quick_metrics"), dict) else {}
    debt = _content(envelope, "debt_structure")
    if debt is not None:
        for field, code, tolerance in (("dscr", "CC-02", 0.005), ("ltv", "CC-01", 0.005)):
            left, right = _number(debt.get(field)), _number(metrics.get(field))
            if left is not None and right is not None and abs(left - right) > tolerance:
                issue(
                    code,
                    "error",
                    f"{field.upper()} mismatch: debt_structure.{field}={es(left)} "
                    f"vs quick_metrics.{field}={es(right)}",
                    f"frontmatter.quick_metrics.{field}",
                )
        dscr = _number(debt.get("dscr"))
        if dscr is not None and dscr < 1.2:
            issue(
                "FV_DSCR_BELOW_MINIMUM",
                "warning",
                f"DSCR {es(dscr)} is below 1.20.",
                "sections.debt_structure",
            )
    else:
        issue("META_SECTION_ABSENT", "info", "There is no debt_structure section.", "sections.debt_structure")
    uses = _content(envelope, "sources_uses")
    if uses is not None:
        total = [
            sum(_number(i.get("amount")) or 0 for i in uses.get(side, []) if isinstance(i, dict))
            for side in ("sources", "uses")
        ]
        if abs(total[0] - total[1]) > 1:
            issue("CC-03", "error", "Sources and uses do not balance.", "sections.sources_uses")
    noi = _content(envelope, "noi_model")
    left, right = (
        (_number(noi.get("net_operating_income")) if noi else None),
        _number(metrics.get("noi_underwritten")),
    )
    if left is not None and right is not None and abs(left - right) > 1:
        issue(
            "CC-04", "warning", "Underwritten NOI differs between noi_model and quick_metrics.", "frontmatter"
        )
    errors = [i for i in issues if i["severity"] == "error"]
    warnings = [i for i in issues if i["severity"] == "warning"]
    info = [i for i in issues if i["severity"] == "info"]
    meta_errors = any(i["code"].startswith("META_") for i in errors)
    return {
        "overall_status": "fail" if errors else ("warn" if warnings else "pass"),
        "stage_readiness": {
            "screening": "blocked" if meta_errors else "ready",
            "underwriting": "blocked" if errors else "ready",
            "committee": "blocked" if errors or warnings else "ready",
        },
        "issues": issues,
        "errors": len(errors),
        "warnings": len(warnings),
        "info": len(info),
    }


def es(value: float) -> str:
    return codecs.es_number(value)
