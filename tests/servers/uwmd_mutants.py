"""Mutants of the reference UWMD server: the reference with exactly one planted defect each.

    python -m tests.servers.uwmd_mutants --defect NAME [--db FILE] [--http --port 0]     # the server
    python -m tests.servers.uwmd_mutants --defect NAME --controller --db FILE           # its controller
    python -m tests.servers.uwmd_mutants --controller --hooks load_deal,reset --db FILE

Each defect overrides one rule of `UwmdStore`, `UwmdService` or the editor, so everything else stays the
reference and a uwmd check that fails can only be failing on that defect. `--hooks` serves a controller
with only the named hooks (the SKIP `needs:` tests).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import mcp_types as types

from conformance.fixtures import Controller
from conformance_reference import uwmd_codecs as codecs
from conformance_reference import uwmd_controller, uwmd_server
from conformance_reference import uwmd_state as state
from conformance_reference.uwmd_codecs import CodecError, uris, xml_codec
from conformance_reference.uwmd_codecs import envelope as envelopes
from conformance_reference.uwmd_server import Outcome, UwmdService
from conformance_reference.uwmd_state import Row, ServiceError, UwmdStore

JSON = dict[str, Any]


# --------------------------------------------------------------------------- If-Match and atomicity


class WeakIfMatch(UwmdStore):
    """If-Match compared weakly: `W/"..."` matches the same opaque tag (RFC 9110's weak comparison)."""

    def check_if_match(self, if_match: str, digest: str) -> None:
        given = if_match.strip()
        super().check_if_match(given[2:] if given.startswith("W/") else given, digest)


class DuplicateAccepted(UwmdStore):
    """A repeat of the last call (same If-Match, same operation) is taken as a retry and applied again."""

    def apply_edit(self, principal: str, deal_id: str, if_match: Any, operation: JSON, context: JSON) -> JSON:
        key = json.dumps(operation, sort_keys=True)
        with self.transaction() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS replays (deal_id TEXT PRIMARY KEY, etag TEXT, op TEXT)")
            row = self.authorize(conn, self._row(conn, deal_id), principal, "uw-json")
            self.require_if_match(if_match)
            envelope, digest = self.decode(row)
            last = conn.execute("SELECT etag, op FROM replays WHERE deal_id = ?", (deal_id,)).fetchone()
            retry = last is not None and last[0] == str(if_match).strip() and last[1] == key
            if not retry:
                self.check_if_match(str(if_match), digest)
            receipt = self.commit_edit(conn, row, envelope, operation, context)
            conn.execute(
                "INSERT OR REPLACE INTO replays (deal_id, etag, op) VALUES (?, ?, ?)",
                (deal_id, last[0] if retry else codecs.etag(digest), key),
            )
        return receipt


class IdempotentEdit(UwmdStore):
    """The same operation as the deal's last one, with the now-current ETag, is answered as already applied:
    SUCCESS with the current digest and nothing written (the edit is treated as idempotent)."""

    def apply_edit(self, principal: str, deal_id: str, if_match: Any, operation: JSON, context: JSON) -> JSON:
        key = json.dumps(operation, sort_keys=True)
        with self.transaction() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS last_ops (deal_id TEXT PRIMARY KEY, op TEXT)")
            row = self.authorize(conn, self._row(conn, deal_id), principal, "uw-json")
            self.require_if_match(if_match)
            envelope, digest = self.decode(row)
            self.check_if_match(str(if_match), digest)
            last = conn.execute("SELECT op FROM last_ops WHERE deal_id = ?", (deal_id,)).fetchone()
            if last is not None and last[0] == key:
                return {
                    "ok": True,
                    "deal_id": row.deal_id,
                    "resource_uri": codecs.resource_uri(row.deal_id),
                    "semantic_digest": digest,
                    "etag": codecs.etag(digest),
                    "superseded_prior_block": False,
                }
            receipt = self.commit_edit(conn, row, envelope, operation, context)
            conn.execute("INSERT OR REPLACE INTO last_ops (deal_id, op) VALUES (?, ?)", (deal_id, key))
        return receipt


class SecondResolutionClock(UwmdStore):
    """Not a defect: every edit is stamped with the current whole second, so two edits within one second
    carry the same timestamps (a server whose clock has one-second resolution)."""

    def edit_instant(self, envelope: JSON) -> str:
        return state.format_instant(state.now_ms() // 1000 * 1000)


class LostUpdate(UwmdStore):
    """Check-then-act: If-Match is compared in one transaction and the edit written in another."""

    def apply_edit(self, principal: str, deal_id: str, if_match: Any, operation: JSON, context: JSON) -> JSON:
        with self.snapshot() as conn:
            row = self.authorize(conn, self._row(conn, deal_id), principal, "uw-json")
        self.require_if_match(if_match)
        envelope, digest = self.decode(row)
        self.check_if_match(str(if_match), digest)
        time.sleep(0.03)  # the window in which another edit slips through
        with self.transaction() as conn:
            return self.commit_edit(conn, row, envelope, operation, context)


class No428(UwmdStore):
    """A write without If-Match is taken as unconditional."""

    def apply_edit(self, principal: str, deal_id: str, if_match: Any, operation: JSON, context: JSON) -> JSON:
        if isinstance(if_match, str) and if_match.strip():
            return super().apply_edit(principal, deal_id, if_match, operation, context)
        with self.transaction() as conn:
            row = self.authorize(conn, self._row(conn, deal_id), principal, "uw-json")
            envelope, _ = self.decode(row)
            return self.commit_edit(conn, row, envelope, operation, context)


# --------------------------------------------------------------------------- results and listings


class InlineDocument(UwmdService):
    """apply_edit puts the whole updated envelope into structuredContent."""

    def apply_edit(self, principal: str, args: JSON) -> Outcome:
        outcome = super().apply_edit(principal, args)
        fetched = self.store.fetch(principal, args["deal_id"], "uw-json")
        outcome.structured["document"] = fetched.envelope
        return outcome


class TextDiffers(UwmdService):
    """The JSON text block leaves out semantic_digest: it is not the value structuredContent carries."""

    def text_block(self, structured: JSON) -> str:
        return uwmd_server.compact({k: v for k, v in structured.items() if k != "semantic_digest"})


class ApplyEditReadOnly(UwmdService):
    def tools(self) -> list[JSON]:
        tools = super().tools()
        for tool in tools:
            if tool["name"] == uwmd_server.APPLY_EDIT:
                tool["annotations"] = {**tool["annotations"], "readOnlyHint": True}
        return tools


class ReadToolsUnannotated(UwmdService):
    def tools(self) -> list[JSON]:
        tools = super().tools()
        for tool in tools:
            if tool["name"] != uwmd_server.APPLY_EDIT:
                tool.pop("annotations")
        return tools


class ViewClaimsModel(UwmdService):
    """list_representations' view profiles advertise model fidelity."""

    def list_representations(self, principal: str, args: JSON) -> Outcome:
        outcome = super().list_representations(principal, args)
        for profile in outcome.structured["view_profiles"]:
            profile["fidelity"] = "model"
        return outcome


class StackTrace(UwmdService):
    """Every refusal carries the Python traceback of where it was raised."""

    def run(self, name: str, principal: str, args: JSON) -> Outcome:
        try:
            return super().run(name, principal, args)
        except ServiceError as exc:
            exc.message = f"{exc.message}\n{traceback.format_exc(limit=2)}"[:1500]
            raise


# --------------------------------------------------------------------------- resources and selections


class FileUri(UwmdService):
    """A file: URI is read from the local disk."""

    def read_resource(
        self, principal: str, uri: str
    ) -> types.TextResourceContents | types.BlobResourceContents:
        if uri.startswith("file://"):
            try:
                text = Path(uri[len("file://") :]).read_text(encoding="utf-8", errors="replace")[:65536]
            except OSError as exc:
                raise ServiceError(404, "RESOURCE_NOT_FOUND", "No such file.") from exc
            return types.TextResourceContents(uri=uri, mime_type="text/plain", text=text)
        return super().read_resource(principal, uri)


class ViewWhenAbsent(UwmdService):
    """A view whose section is absent is served as an empty CSV."""

    def view_text(self, envelope: JSON, view: str) -> str:
        try:
            return super().view_text(envelope, view)
        except ServiceError as exc:
            if exc.status != 406:
                raise
            return "field,value\r\n"


class SelectionConflictIgnored(UwmdService):
    """view wins over a non-default representation instead of being refused."""

    def _selection(self, representation: Any, view: Any) -> tuple[str, str | None]:
        return super()._selection(None if view is not None else representation, view)


class UnknownRepresentationAsJson(UwmdService):
    """get_document serves uw-json for a representation it does not know."""

    def get_document(self, principal: str, args: JSON) -> Outcome:
        if args.get("representation") not in (None, *codecs.REPRESENTATIONS):
            args = {**args, "representation": None}
        return super().get_document(principal, args)


class ValidateCached(UwmdService):
    """validate answers from the first result it computed for a deal (per process)."""

    cache: dict[str, Outcome] = {}

    def validate(self, principal: str, args: JSON) -> Outcome:
        if args["deal_id"] not in self.cache:
            self.cache[args["deal_id"]] = super().validate(principal, args)
        return self.cache[args["deal_id"]]


# --------------------------------------------------------------------------- authorization


class TenantLeak(UwmdStore):
    """Default allow: a principal with no grant on a deal reads all of it (grants only narrow)."""

    def authorize(self, conn: Any, row: Row | None, principal: str, variant: str) -> Row:
        if row is not None and self.variants(conn, principal, row.deal_id) is None:
            return row
        return super().authorize(conn, row, principal, variant)


class RepresentationAclIgnored(UwmdStore):
    """Any grant on a deal opens every representation and view of it."""

    def variants(self, conn: Any, principal: str, deal_id: str) -> list[str] | None:
        granted = super().variants(conn, principal, deal_id)
        return None if granted is None else [state.ALL]


# --------------------------------------------------------------------------- codecs and the editor


def _naive_xml(text: str) -> tuple[JSON, str]:
    """uw-xml parsed without refusing the DTD: the parser expands internal entities (the defect)."""
    try:
        root = ElementTree.fromstring(text)
        envelope = codecs.check_envelope(codecs.xml_object(root, 0))
        return envelope, codecs.verify_digest(envelope)
    except ElementTree.ParseError:
        raise ServiceError(
            422, "BINDING_XML_INVALID", "The uw-xml document is not well-formed XML."
        ) from None
    except CodecError as exc:
        raise ServiceError.of(exc) from None


class XmlEntityExpanded(UwmdStore):
    """uw-xml is parsed without refusing the DTD: the parser expands internal entities."""

    def decode(self, row: Row) -> tuple[JSON, str]:
        if row.representation != "uw-xml":
            return super().decode(row)
        try:
            text = row.body.decode("utf-8")
        except UnicodeDecodeError:
            raise ServiceError(
                422, "BINDING_XML_INVALID", "The uw-xml document is not well-formed XML."
            ) from None
        return _naive_xml(text)


class XmlServedVerbatim(UwmdService):
    """A deal stored as uw-xml is served as its stored bytes when uw-xml is asked for: no codec runs."""

    def read_resource(
        self, principal: str, uri: str
    ) -> types.TextResourceContents | types.BlobResourceContents:
        selection = codecs.parse_uri(uri)
        if selection is not None and selection.representation == "uw-xml" and selection.view is None:
            with self.store.snapshot() as conn:
                row = self.store.authorize(
                    conn, self.store._row(conn, selection.deal_id), principal, "uw-xml"
                )
            if row.representation == "uw-xml":
                media = codecs.REPRESENTATIONS["uw-xml"]["media_type"]
                return types.TextResourceContents(uri=uri, mime_type=media, text=row.body.decode("utf-8"))
        return super().read_resource(principal, uri)


class ZipUnchecked(UwmdStore):
    """Bundles are extracted without member-path, count or ratio checks."""

    def decode(self, row: Row) -> tuple[JSON, str]:
        if row.representation != "uw-csv-bundle":
            return super().decode(row)
        import io
        import zipfile

        with zipfile.ZipFile(io.BytesIO(row.body)) as archive:
            files = {name: archive.read(name).decode("utf-8") for name in archive.namelist()}
        envelope = codecs.check_envelope(codecs.bundle_to_envelope(files))
        return envelope, codecs.verify_digest(envelope)


class LenientUtf8(UwmdStore):
    """Invalid UTF-8 is replaced instead of refused."""

    def decode(self, row: Row) -> tuple[JSON, str]:
        text = row.body.decode("utf-8", errors="replace")
        return super().decode(Row(row.deal_id, row.tenant, row.representation, text.encode("utf-8")))


class CanaryLeak(UwmdStore):
    """A refused section_replace quotes the block it would have replaced."""

    def commit_edit(self, conn: Any, row: Row, envelope: JSON, operation: JSON, context: JSON) -> JSON:
        try:
            return super().commit_edit(conn, row, envelope, operation, context)
        except ServiceError as exc:
            if exc.code == "PROTO-EDIT-001":
                block = envelope["sections"].get(operation.get("section_id"), {})
                exc.message = f"{exc.message} Current block: {json.dumps(block.get('content'))[:600]}"
            raise


# --------------------------------------------------------------------------- more defects, one row each


class ViewUnknownServed(UwmdService):
    """An unknown view is served as the deal summary."""

    def _selection(self, representation: Any, view: Any) -> tuple[str, str | None]:
        return super()._selection(
            representation, "deal_summary" if view not in (None, *codecs.VIEWS) else view
        )


class ViewAsBlob(UwmdService):
    """Named views are read as base64 blobs, not UTF-8 text."""

    def read_resource(
        self, principal: str, uri: str
    ) -> types.TextResourceContents | types.BlobResourceContents:
        contents = super().read_resource(principal, uri)
        if isinstance(contents, types.TextResourceContents) and contents.mime_type == codecs.CSV_MEDIA_TYPE:
            blob = codecs.blob(contents.text.encode("utf-8"))
            return types.BlobResourceContents(uri=uri, mime_type=contents.mime_type, blob=blob)
        return contents


class XmlGenericMime(UwmdService):
    """uw-xml contents are declared application/xml, not the registered type."""

    def read_resource(
        self, principal: str, uri: str
    ) -> types.TextResourceContents | types.BlobResourceContents:
        contents = super().read_resource(principal, uri)
        if contents.mime_type == codecs.REPRESENTATIONS["uw-xml"]["media_type"]:
            contents.mime_type = "application/xml"
        return contents


class BundleAsText(UwmdService):
    """The bundle is a text content holding base64, not a blob."""

    def read_resource(
        self, principal: str, uri: str
    ) -> types.TextResourceContents | types.BlobResourceContents:
        contents = super().read_resource(principal, uri)
        if isinstance(contents, types.BlobResourceContents):
            return types.TextResourceContents(uri=uri, mime_type=contents.mime_type, text=contents.blob)
        return contents


class ViewDigestDiffers(UwmdService):
    """A view reports the digest of its CSV instead of the deal's semantic digest."""

    def get_document(self, principal: str, args: JSON) -> Outcome:
        outcome = super().get_document(principal, args)
        view = outcome.structured.get("view")
        if view:
            fetched = self.store.fetch(principal, args["deal_id"], view)
            csv = self.view_text(fetched.envelope, view).encode("utf-8")
            outcome.structured["semantic_digest"] = "sha256:" + hashlib.sha256(csv).hexdigest()
        return outcome


class DigestOverVolatile(UwmdService):
    """The uw-json's embedded semantic_digest also covers generated_at and generator."""

    def encoded(self, envelope: JSON, representation: str) -> str | bytes:
        if representation != "uw-json":
            return super().encoded(envelope, representation)
        stamped = codecs.stamp(envelope, state.format_instant(state.now_ms()))
        body = {k: v for k, v in stamped.items() if k != "semantic_digest"}
        stamped["semantic_digest"] = (
            "sha256:" + hashlib.sha256(codecs.canonical_json(body).encode()).hexdigest()
        )
        return codecs.encode("uw-json", stamped)


class LossyNumbers(UwmdStore):
    """The store keeps numbers to six significant digits: the documents it serves are not the ones loaded."""

    def encode_json(self, envelope: JSON) -> bytes:
        def rounded(value: Any) -> Any:
            if isinstance(value, float):
                return float(f"{value:.6g}")
            if isinstance(value, dict):
                return {k: rounded(v) for k, v in value.items()}
            if isinstance(value, list):
                return [rounded(v) for v in value]
            return value

        return super().encode_json(rounded(envelope))


class DefaultXml(UwmdService):
    """get_document without a representation serves uw-xml."""

    def get_document(self, principal: str, args: JSON) -> Outcome:
        if args.get("representation") is None and args.get("view") is None:
            args = {**args, "representation": "uw-xml"}
        return super().get_document(principal, args)


class LinkWithoutName(UwmdService):
    def link(self, deal_id: str, representation: str, view: str | None, *, updated: bool = False) -> JSON:
        return {**super().link(deal_id, representation, view, updated=updated), "name": ""}


class ViewWithRepresentationId(UwmdService):
    """A view result also names the default representation."""

    def metadata(self, deal_id: str, digest: str, representation: str, view: str | None) -> JSON:
        out = super().metadata(deal_id, digest, representation, view)
        if view:
            out["representation_id"] = representation
        return out


class ValidateWithoutReadiness(UwmdService):
    def validate(self, principal: str, args: JSON) -> Outcome:
        outcome = super().validate(principal, args)
        outcome.structured.pop("stage_readiness")
        return outcome


class ValidateAnything(UwmdService):
    """validate without deal_id validates the first deal the principal can see."""

    def validate(self, principal: str, args: JSON) -> Outcome:
        if "deal_id" not in args:
            args = {**args, "deal_id": self.store.visible(principal)[0]}
        return super().validate(principal, args)


class ConvertNeedsSource(UwmdService):
    def convert(self, principal: str, args: JSON) -> Outcome:
        if args.get("source_representation") is None:
            raise ServiceError(400, "BINDING_SOURCE_REQUIRED", "source_representation is required.")
        return super().convert(principal, args)


class ConvertReportsSource(UwmdService):
    """convert's representation_id names the stored source, not the target."""

    def convert(self, principal: str, args: JSON) -> Outcome:
        outcome = super().convert(principal, args)
        outcome.structured["representation_id"] = outcome.structured["source_representation"]
        return outcome


class ConvertDigestOfBytes(UwmdService):
    """convert reports the SHA-256 of the encoded target bytes as the semantic digest."""

    def convert(self, principal: str, args: JSON) -> Outcome:
        outcome = super().convert(principal, args)
        if args["target_representation"] != "uw-json":
            fetched = self.store.fetch(principal, args["deal_id"], args["target_representation"])
            encoded = self.encoded(fetched.envelope, args["target_representation"])
            data = encoded if isinstance(encoded, bytes) else encoded.encode("utf-8")
            outcome.structured["semantic_digest"] = "sha256:" + hashlib.sha256(data).hexdigest()
        return outcome


class ConvertAnyTarget(UwmdService):
    """An unknown target representation is converted to uw-json."""

    def convert(self, principal: str, args: JSON) -> Outcome:
        if args.get("target_representation") not in codecs.REPRESENTATIONS:
            args = {**args, "target_representation": "uw-json"}
        return super().convert(principal, args)


class ReceiptEtagUnquoted(UwmdStore):
    def commit_edit(self, conn: Any, row: Row, envelope: JSON, operation: JSON, context: JSON) -> JSON:
        receipt = super().commit_edit(conn, row, envelope, operation, context)
        receipt["etag"] = receipt["semantic_digest"]
        return receipt


class EditTouchesStatus(UwmdStore):
    """A frontmatter edit also sets the deal's status."""

    def commit_edit(self, conn: Any, row: Row, envelope: JSON, operation: JSON, context: JSON) -> JSON:
        if operation.get("kind") == "frontmatter_set":
            envelope = {**envelope, "frontmatter": {**envelope["frontmatter"], "status": "edited"}}
        return super().commit_edit(conn, row, envelope, operation, context)


class ValidateWrites(UwmdService):
    """validate records when it ran in the deal itself: a read tool that changes the document."""

    def validate(self, principal: str, args: JSON) -> Outcome:
        outcome = super().validate(principal, args)
        with self.store.transaction() as conn:
            row = self.store.authorize(conn, self.store._row(conn, args["deal_id"]), principal, "uw-json")
            envelope, _ = self.store.decode(row)
            envelope["frontmatter"]["last_validated"] = state.format_instant(state.now_ms())
            self.store.write(conn, row, self.store.encode_json(envelope))
        return outcome


class ListTextOnly(UwmdService):
    """list_representations answers with a JSON text block only, no structuredContent."""

    def result(self, outcome: Outcome) -> types.CallToolResult:
        if "representations" not in outcome.structured:
            return super().result(outcome)
        text = types.TextContent(type="text", text=uwmd_server.compact(outcome.structured))
        return types.CallToolResult(content=[text], is_error=False)


class BundleEmbedded(UwmdService):
    """get_document of the bundle embeds the ZIP as a blob resource next to the link."""

    def result(self, outcome: Outcome) -> types.CallToolResult:
        result = super().result(outcome)
        if outcome.structured.get("representation_id") == "uw-csv-bundle":
            fetched = self.store.fetch(self.default, outcome.structured["deal_id"], "uw-csv-bundle")
            data = self.encoded(fetched.envelope, "uw-csv-bundle")
            assert isinstance(data, bytes)
            blob = types.BlobResourceContents(
                uri=outcome.structured["resource_uri"],
                mime_type=outcome.structured["media_type"],
                blob=codecs.blob(data),
            )
            result.content.append(types.EmbeddedResource(type="resource", resource=blob))
        return result


class SummaryMissing(UwmdService):
    def get_document(self, principal: str, args: JSON) -> Outcome:
        outcome = super().get_document(principal, args)
        outcome.structured.pop("summary", None)
        return outcome


class ErrorTextBloated(UwmdService):
    """Every refusal's text block adds three kilobytes of help."""

    def refusal(self, exc: ServiceError) -> types.CallToolResult:
        result = super().refusal(exc)
        help_text = "See the UW Markdown binding, section 3, for what this error means. " * 50
        result.content.append(types.TextContent(type="text", text=help_text))
        return result


class PreconditionDetailsMissing(UwmdService):
    """412 and 428 carry a code and a message but no precondition details."""

    def refusal(self, exc: ServiceError) -> types.CallToolResult:
        if exc.status in (412, 428):
            exc.details = {}
        return super().refusal(exc)


class StaleAs409(UwmdStore):
    """An If-Match that does not match is refused 409 conflict, not 412."""

    def check_if_match(self, if_match: str, digest: str) -> None:
        try:
            super().check_if_match(if_match, digest)
        except ServiceError as exc:
            raise ServiceError(
                409, "conflict", "The deal changed since it was read.", **exc.details
            ) from None


class ListUnlisted(UwmdService):
    """list_representations can be called but is not listed."""

    def tools(self) -> list[JSON]:
        return [t for t in super().tools() if t["name"] != uwmd_server.LIST_REPRESENTATIONS]


class ListsNoUwmdTools(UwmdService):
    """tools/list shows none of the five tools (still callable): the binding is claimed, not shown."""

    def tools(self) -> list[JSON]:
        return []


class ListInputStrict(UwmdService):
    """The listed inputSchema of list_representations requires a member (calls with {} still work)."""

    def tools(self) -> list[JSON]:
        tools = super().tools()
        for tool in tools:
            if tool["name"] == uwmd_server.LIST_REPRESENTATIONS:
                tool["inputSchema"] = {"type": "object", "required": ["filter"], "properties": {"filter": {}}}
        return tools


class HangsOnDtd(UwmdStore):
    """Decoding a uw-xml that declares a DTD never finishes (a parser stuck expanding it): a hang."""

    def decode(self, row: Row) -> tuple[JSON, str]:
        if row.representation == "uw-xml" and b"<!DOCTYPE" in row.body:
            time.sleep(60)
        return super().decode(row)


class CrashesOnFileUri(UwmdService):
    """A file: URI takes the whole server process down."""

    def read_resource(
        self, principal: str, uri: str
    ) -> types.TextResourceContents | types.BlobResourceContents:
        if uri.startswith("file:"):
            os._exit(3)
        return super().read_resource(principal, uri)


STORES: dict[str, type[UwmdStore]] = {
    "weak-if-match": WeakIfMatch,
    "duplicate-accepted": DuplicateAccepted,
    "idempotent-edit": IdempotentEdit,
    "lost-update": LostUpdate,
    "no-428": No428,
    "tenant-leak": TenantLeak,
    "representation-acl-ignored": RepresentationAclIgnored,
    "xml-entity-expanded": XmlEntityExpanded,
    "zip-unchecked": ZipUnchecked,
    "lenient-utf8": LenientUtf8,
    "canary-leak": CanaryLeak,
    "lossy-numbers": LossyNumbers,
    "receipt-etag-unquoted": ReceiptEtagUnquoted,
    "edit-touches-status": EditTouchesStatus,
    "stale-as-409": StaleAs409,
    "hangs-on-dtd": HangsOnDtd,
}
SERVICES: dict[str, type[UwmdService]] = {
    "inline-document": InlineDocument,
    "text-differs": TextDiffers,
    "apply-edit-read-only": ApplyEditReadOnly,
    "read-tools-unannotated": ReadToolsUnannotated,
    "view-claims-model": ViewClaimsModel,
    "stack-trace": StackTrace,
    "file-uri": FileUri,
    "view-when-absent": ViewWhenAbsent,
    "selection-conflict-ignored": SelectionConflictIgnored,
    "unknown-representation-as-json": UnknownRepresentationAsJson,
    "validate-cached": ValidateCached,
    "view-unknown-served": ViewUnknownServed,
    "view-as-blob": ViewAsBlob,
    "xml-generic-mime": XmlGenericMime,
    "bundle-as-text": BundleAsText,
    "view-digest-differs": ViewDigestDiffers,
    "digest-over-volatile": DigestOverVolatile,
    "default-xml": DefaultXml,
    "link-without-name": LinkWithoutName,
    "view-with-representation-id": ViewWithRepresentationId,
    "validate-without-readiness": ValidateWithoutReadiness,
    "validate-needs-nothing": ValidateAnything,
    "convert-needs-source": ConvertNeedsSource,
    "convert-reports-source": ConvertReportsSource,
    "convert-digest-of-bytes": ConvertDigestOfBytes,
    "convert-any-target": ConvertAnyTarget,
    "validate-writes": ValidateWrites,
    "list-text-only": ListTextOnly,
    "bundle-embedded": BundleEmbedded,
    "summary-missing": SummaryMissing,
    "error-text-bloated": ErrorTextBloated,
    "precondition-details-missing": PreconditionDetailsMissing,
    "list-unlisted": ListUnlisted,
    "list-input-strict": ListInputStrict,
    "lists-no-uwmd-tools": ListsNoUwmdTools,
    "crashes-on-file-uri": CrashesOnFileUri,
    "xml-served-verbatim": XmlServedVerbatim,
}


def _no_size_limit() -> None:
    envelopes.limit = lambda representation, body: None  # type: ignore[assignment]


def _digest_unchecked() -> None:
    """A stored document's embedded semantic_digest is never compared with its content."""
    codecs.verify_digest = envelopes.verify_digest = codecs.semantic_digest  # type: ignore[assignment]


def _replace_agent_in_place() -> None:
    state.supersede_on_edit = lambda source: False  # type: ignore[assignment]


def _id_not_encoded() -> None:
    """resource_uri carries the raw deal id (no RFC 6570 percent-encoding)."""
    codecs.encode_deal_id = uris.encode_deal_id = lambda deal_id: deal_id  # type: ignore[assignment]


def _xml_without_namespace() -> None:
    """uw-xml is written (and read) in a namespace that is not the binding's."""
    codecs.XML_NS = xml_codec.XML_NS = "urn:example:not-uwmd"  # type: ignore[misc]


def _validate_needs_nothing() -> None:
    """validate's inputSchema no longer requires deal_id (and the service then validates some deal)."""
    original = uwmd_server.tool_definitions

    def definitions() -> list[JSON]:
        tools = original()
        for tool in tools:
            if tool["name"] == uwmd_server.VALIDATE:
                tool["inputSchema"].pop("required")
        return tools

    uwmd_server.tool_definitions = definitions  # type: ignore[assignment]


def _extra_op_members() -> None:
    """The EditOperation schema lets members through that no kind defines."""
    original = uwmd_server._edit_operation_defs

    def defs() -> JSON:
        out = original()
        for name in ("frontmatterSet", "sectionReplace", "sectionSupersede", "pipelineLogAppend"):
            out[name] = {k: v for k, v in out[name].items() if k != "additionalProperties"}
        return out

    uwmd_server._edit_operation_defs = defs  # type: ignore[assignment]


def _template_without_query() -> None:
    codecs.TEMPLATE = "https://uwmd.org/deals/{deal_id}"  # type: ignore[misc]


#: Defects that change one module-level rule of the reference when the process starts.
PATCHES = {
    "digest-unchecked": _digest_unchecked,
    "no-size-limit": _no_size_limit,
    "replace-agent-in-place": _replace_agent_in_place,
    "template-without-query": _template_without_query,
    "id-not-encoded": _id_not_encoded,
    "xml-without-namespace": _xml_without_namespace,
    "validate-needs-nothing": _validate_needs_nothing,
    "extra-op-members": _extra_op_members,
}
DEFECTS = sorted({*STORES, *SERVICES, *PATCHES, "convert-source-entities-expanded"})


class ConvertTakesSource(UwmdService):
    """Not a defect: uwmd.convert also takes the source document itself (`source_document`, decoded with
    `source_representation`) and converts it without storing it, through the same protected codecs."""

    def decode_source(self, representation: str, text: str) -> tuple[JSON, str]:
        try:
            return codecs.decode(representation, text.encode("utf-8"))
        except CodecError as exc:
            raise ServiceError.of(exc) from None

    def convert(self, principal: str, args: JSON) -> Outcome:
        if "source_document" not in args:
            return super().convert(principal, args)
        target = args["target_representation"]
        self._selection(target, None)
        source = args.get("source_representation") or codecs.DEFAULT_REPRESENTATION
        self._selection(source, None)
        envelope, digest = self.decode_source(source, str(args["source_document"]))
        self.encoded(envelope, target)
        structured = self.metadata(str(args["deal_id"]), digest, target, None)
        structured["source_representation"] = source
        return Outcome(structured)


class ConvertSourceEntitiesExpanded(ConvertTakesSource):
    """convert's source document is parsed naively: a uw-xml DTD is read and its entities expanded."""

    def decode_source(self, representation: str, text: str) -> tuple[JSON, str]:
        if representation == "uw-xml":
            return _naive_xml(text)
        return super().decode_source(representation, text)


class ConvertSourceRefused(ConvertTakesSource):
    """Not a defect: convert lists a source document but refuses every one it is given (say, a feature
    switched off): its refusals of hostile documents prove nothing about a protection."""

    def decode_source(self, representation: str, text: str) -> tuple[JSON, str]:
        raise ServiceError(501, "BINDING_SOURCE_DISABLED", "Inline source documents are not enabled here.")


def _convert_takes_source() -> None:
    original = uwmd_server.tool_definitions

    def definitions() -> list[JSON]:
        tools = original()
        for tool in tools:
            if tool["name"] == uwmd_server.CONVERT:
                tool["inputSchema"]["properties"]["source_document"] = {
                    "type": "string",
                    "description": "optional: the source document itself, in source_representation",
                }
        return tools

    uwmd_server.tool_definitions = definitions  # type: ignore[assignment]


class FlatEditArguments(UwmdService):
    """Not a defect: apply_edit names its operation `edit` and takes `actor`/`source` flat (gap rule G-U1)."""

    def apply_edit(self, principal: str, args: JSON) -> Outcome:
        rest = {k: v for k, v in args.items() if k not in ("edit", "actor", "source")}
        context = {"actor": args["actor"], "source": args["source"]}
        return super().apply_edit(principal, {**rest, "operation": args["edit"], "context": context})


def _flat_edit_arguments() -> None:
    original = uwmd_server.tool_definitions

    def definitions() -> list[JSON]:
        tools = original()
        for tool in tools:
            if tool["name"] == uwmd_server.APPLY_EDIT:
                schema = tool["inputSchema"]
                properties = schema["properties"]
                properties["edit"] = properties.pop("operation")
                context = properties.pop("context")["properties"]
                properties["actor"], properties["source"] = context["actor"], context["source"]
                schema["required"] = ["deal_id", "edit", "actor", "source"]
        return tools

    uwmd_server.tool_definitions = definitions  # type: ignore[assignment]


#: Conformant variants (no defect): the suite must pass them.
VARIANTS: dict[str, tuple[type[UwmdService], Any]] = {
    "flat-edit-arguments": (FlatEditArguments, _flat_edit_arguments),
    "convert-takes-source": (ConvertTakesSource, _convert_takes_source),
    "convert-source-refused": (ConvertSourceRefused, _convert_takes_source),
}
#: Defects of a variant: (service, the variant's patch).
VARIANT_DEFECTS: dict[str, tuple[type[UwmdService], Any]] = {
    "convert-source-entities-expanded": (ConvertSourceEntitiesExpanded, _convert_takes_source),
}
#: Conformant variants of the store (no defect): the suite must pass them too.
VARIANT_STORES: dict[str, type[UwmdStore]] = {"second-resolution-clock": SecondResolutionClock}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.servers.uwmd_mutants")
    parser.add_argument("--defect", choices=["none", *DEFECTS, *VARIANTS, *VARIANT_STORES], default="none")
    parser.add_argument("--controller", action="store_true", help="serve the fixture controller instead")
    parser.add_argument("--hooks", help="controller: offer only these hooks (comma-separated)")
    args, rest = parser.parse_known_args(argv)
    store = STORES.get(args.defect) or VARIANT_STORES.get(args.defect, UwmdStore)
    service = SERVICES.get(args.defect, UwmdService)
    if args.defect in VARIANTS or args.defect in VARIANT_DEFECTS:
        service, patch = {**VARIANTS, **VARIANT_DEFECTS}[args.defect]
        patch()
    if args.controller:
        if args.defect in PATCHES:
            PATCHES[args.defect]()
        if args.hooks is None:
            return uwmd_controller.main(rest, store_class=store)
        options = uwmd_controller.parse_args(rest)
        full = uwmd_controller.build_controller(store(options.db))
        partial = Controller("partial UWMD controller")
        for name in args.hooks.split(","):
            if name:
                partial.add(name, full._hooks[name])
        return partial.serve_stdio()
    if args.defect in PATCHES:
        PATCHES[args.defect]()
    return uwmd_server.main(rest, store_class=store, service_class=service)


if __name__ == "__main__":
    sys.exit(main())
