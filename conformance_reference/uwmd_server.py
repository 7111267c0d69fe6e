"""The reference UW Markdown MCP binding 1.0 server: deal resources and the five `uwmd.*` tools.

Why it exists: the `uwmd` suite needs a target known to meet every row it checks, so that a failing check
against it is a bug in the harness. It serves deals at `https://uwmd.org/deals/{deal_id}` with the RFC 6570
template `https://uwmd.org/deals/{deal_id}{?representation,view}`: uw-json and uw-xml as text contents, the
six named views as `text/csv; charset=utf-8` text, the CSV bundle as a base64 ZIP blob. Tool results are
compact metadata in structuredContent plus one compact JSON text block of the same value, with a
resource_link to the document (never the document inline). Refusals are tool-execution errors whose
structuredContent and text carry `{ok, code, status, message}` and precondition details, and never a stack
trace or a document body. `uwmd.apply_edit` is a strong If-Match compare-and-set in one SQLite transaction
(`uwmd_state`), so racers in separate processes cannot both win.

The acting principal comes from `--principal` or the environment (`UWMD_REFERENCE_PRINCIPAL`) of a stdio
process, or from the `X-Uwmd-Principal` header of an HTTP request; authentication belongs to the host
(binding §7), authorization per deal and per representation to the reference.

    python -m conformance_reference.uwmd_server [--db FILE] [--principal P]          # stdio
    python -m conformance_reference.uwmd_server --http --port 0 [--db FILE]          # Streamable HTTP

Racers over stdio are separate processes: give them one `--db FILE` (the embedded default does). Without
`--db`, stdio keeps its state in memory and HTTP in a temporary file removed at exit.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import anyio
import jsonschema
import mcp_types as types
from jsonschema.exceptions import best_match
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from conformance_reference import uwmd_codecs as codecs
from conformance_reference.handlers import (
    JSON,
    RESOURCE_NOT_FOUND_LEGACY,
    format_validators,
    one_page_tools,
    reference_server,
    refuse_before_sep1303,
    refuse_cursor,
    structured_result,
)
from conformance_reference.jsontext import compact
from conformance_reference.serving import serve_with_state, stateful_parser
from conformance_reference.uwmd_state import (
    ENV_PRINCIPAL,
    HEADER_PRINCIPAL,
    PRIMARY,
    ServiceError,
    UwmdStore,
    format_instant,
    now_ms,
    validate,
)

__all__ = ["UwmdService", "build_server", "main", "tool_definitions"]

PROFILE_ID: Final = "urn:mcp-conformance:uwmd:1"
MAX_TEXT: Final = 200
GET_DOCUMENT: Final = "uwmd.get_document"
VALIDATE: Final = "uwmd.validate"
CONVERT: Final = "uwmd.convert"
APPLY_EDIT: Final = "uwmd.apply_edit"
LIST_REPRESENTATIONS: Final = "uwmd.list_representations"


def _edit_operation_defs() -> JSON:
    """The EditOperation union and its members from the project's profile schema, for inputSchema `$defs`."""
    from conformance import schemas

    defs = schemas.schema(PROFILE_ID)["$defs"]
    names = (
        "editOperation",
        "frontmatterSet",
        "sectionReplace",
        "sectionSupersede",
        "pipelineLogAppend",
        "sectionId",
    )
    return {name: defs[name] for name in names}


def _deal_id(description: str) -> JSON:
    return {"type": "string", "minLength": 1, "maxLength": 200, "description": description}


def tool_definitions() -> list[JSON]:
    """The five tools: names, descriptions, inputSchemas, annotations (read-only for all but apply_edit)."""
    read_only = {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    representation = {"type": ["string", "null"], "maxLength": 64}
    return [
        {
            "name": GET_DOCUMENT,
            "title": "Get a UW deal document",
            "description": (
                "Compact metadata of one representation (uw-json, uw-xml, uw-csv-bundle) or named view of a "
                "deal, with a resource_link to read it. Prefer a named view before the complete envelope."
            ),
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["deal_id"],
                "properties": {
                    "deal_id": _deal_id("The deal's id"),
                    "representation": {
                        **representation,
                        "description": "uw-json (default), uw-xml, uw-csv-bundle",
                    },
                    "view": {
                        "type": ["string", "null"],
                        "maxLength": 64,
                        "description": "deal_summary, rent_roll, operating_statement, debt, valuation or"
                        " sources_uses;"
                        " only with the default representation",
                    },
                },
            },
            "annotations": read_only,
        },
        {
            "name": VALIDATE,
            "title": "Validate a UW deal",
            "description": "Validate the deal's current envelope: overall status, stage readiness, issues.",
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["deal_id"],
                "properties": {"deal_id": _deal_id("The deal's id")},
            },
            "annotations": read_only,
        },
        {
            "name": CONVERT,
            "title": "Convert a UW deal",
            "description": (
                "Decode the stored envelope once and encode it as the target representation; returns the "
                "same compact metadata and resource_link as get_document."
            ),
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["deal_id", "target_representation"],
                "properties": {
                    "deal_id": _deal_id("The deal's id"),
                    "target_representation": {"type": "string", "maxLength": 64},
                    "source_representation": {**representation, "description": "optional: the stored one"},
                },
            },
            "annotations": read_only,
        },
        {
            "name": APPLY_EDIT,
            "title": "Apply an edit to a UW deal",
            "description": (
                "Apply one UW Protocol EditOperation through the Tier-2 editor, only if if_match is the "
                "deal's current strong ETag (the quoted semantic digest). Not idempotent: a repeated call "
                "fails 412. "
                "if_match is required; a call without it is refused 428 (precondition required)."
            ),
            "inputSchema": {
                "type": "object",
                "additionalProperties": False,
                "required": ["deal_id", "operation", "context"],
                "properties": {
                    "deal_id": _deal_id("The deal's id"),
                    "if_match": {
                        "type": "string",
                        "maxLength": 256,
                        "description": 'The current strong ETag, e.g. "\\"sha256:<hex>\\"" (required)',
                    },
                    "operation": {"$ref": "#/$defs/editOperation"},
                    "context": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["actor", "source"],
                        "properties": {
                            "actor": {"type": "string", "minLength": 1, "maxLength": 200},
                            "source": {"type": "string", "minLength": 1, "maxLength": 200},
                            "confidence": {"enum": ["high", "medium", "low"]},
                            "agent_id": {"type": ["string", "null"], "maxLength": 200},
                            "agent_version": {"type": ["string", "null"], "maxLength": 64},
                        },
                    },
                },
                "$defs": _edit_operation_defs(),
            },
            "annotations": {
                "readOnlyHint": False,
                "destructiveHint": False,
                "idempotentHint": False,
                "openWorldHint": False,
            },
        },
        {
            "name": LIST_REPRESENTATIONS,
            "title": "List UW representations",
            "description": "The resource template, representation descriptors (fidelity, directions,"
            " limits) and the named views.",
            "inputSchema": {"type": "object", "additionalProperties": False, "properties": {}},
            "annotations": read_only,
        },
    ]


def representations() -> JSON:
    """list_representations' structured result: template, ordered descriptors, views and view profiles."""
    descriptors = [
        {
            "id": rid,
            "media_types": [spec["media_type"]],
            "file_extensions": [spec["extension"]],
            "directions": ["read", "write"],
            "fidelity": "model",
            "representation_version": codecs.REPRESENTATION_VERSION,
            "max_bytes": spec["max_bytes"],
        }
        for rid, spec in codecs.REPRESENTATIONS.items()
    ]
    profiles = [
        {
            "view": view,
            "media_types": [codecs.CSV_MEDIA_TYPE],
            "directions": ["read"],
            "fidelity": "view",
            "source_section": source or "frontmatter",
        }
        for view, source in codecs.VIEWS.items()
    ]
    return {
        "resource_template": codecs.TEMPLATE,
        "representations": descriptors,
        "views": list(codecs.VIEWS),
        "view_profiles": profiles,
    }


@dataclass
class Outcome:
    """A successful tool call: its structured value and the resource it links to (if any)."""

    structured: JSON
    link: JSON | None = None


@dataclass
class UwmdService:
    """The tools and resources over one store; the principal of a call comes from the process or request."""

    store: UwmdStore
    default: str

    def principal(self, ctx: ServerRequestContext[Any]) -> str:
        headers = getattr(ctx.request, "headers", None)
        if isinstance(headers, Mapping):
            value = headers.get(HEADER_PRINCIPAL.lower())
            if isinstance(value, str) and value:
                return value
        return self.default

    def tools(self) -> list[JSON]:
        """What tools/list shows (a test double may misstate it without changing behaviour)."""
        return tool_definitions()

    # ----------------------------------------------------------------- selections

    def _selection(self, representation: Any, view: Any) -> tuple[str, str | None]:
        chosen = codecs.DEFAULT_REPRESENTATION if representation is None else representation
        if chosen not in codecs.REPRESENTATIONS:
            raise ServiceError(
                406, "REPRESENTATION_NOT_ACCEPTABLE", "The representation is not one this server can produce."
            )
        if view is not None:
            if chosen != codecs.DEFAULT_REPRESENTATION:
                raise ServiceError(
                    400,
                    "BINDING_SELECTION_CONFLICT",
                    "A view cannot be combined with a non-default representation.",
                )
            if view not in codecs.VIEWS:
                raise ServiceError(
                    400, "BINDING_VIEW_UNKNOWN", "The view is not one of the binding's named views."
                )
        return chosen, view

    def view_text(self, envelope: JSON, view: str) -> str:
        try:
            return codecs.view_csv(envelope, view)
        except codecs.CodecError as exc:
            raise ServiceError.of(exc) from None

    def encoded(self, envelope: JSON, representation: str) -> str | bytes:
        stamped = codecs.stamp(envelope, format_instant(now_ms()))
        return codecs.encode(representation, stamped)

    def link(self, deal_id: str, representation: str, view: str | None, *, updated: bool = False) -> JSON:
        variant = view or representation
        media = codecs.CSV_MEDIA_TYPE if view else codecs.REPRESENTATIONS[representation]["media_type"]
        fidelity = "Lossy named view" if view else "Complete model-fidelity representation"
        return {
            "uri": codecs.resource_uri(deal_id, representation, view),
            "name": f"{deal_id}-{variant}",
            "title": f"{deal_id} ({'updated ' if updated else ''}{variant})",
            "description": f"{fidelity} of the deal.",
            "mimeType": media,
        }

    def metadata(self, deal_id: str, digest: str, representation: str, view: str | None) -> JSON:
        out: JSON = {"deal_id": deal_id, "resource_uri": codecs.resource_uri(deal_id, representation, view)}
        if view:
            out.update(view=view, fidelity="view", media_type=codecs.CSV_MEDIA_TYPE)
        else:
            media = codecs.REPRESENTATIONS[representation]["media_type"]
            out.update(representation_id=representation, fidelity="model", media_type=media)
        out["semantic_digest"] = digest
        return out

    # ----------------------------------------------------------------- tools

    def get_document(self, principal: str, args: JSON) -> Outcome:
        representation, view = self._selection(args.get("representation"), args.get("view"))
        fetched = self.store.fetch(principal, args["deal_id"], view or representation)
        deal_id = fetched.row.deal_id
        structured = self.metadata(deal_id, fetched.digest, representation, view)
        if view:
            self.view_text(fetched.envelope, view)  # 406 when the view's section is absent
            if view == "deal_summary":
                structured["summary"] = codecs.summary(fetched.envelope)
        else:
            self.encoded(fetched.envelope, representation)
        return Outcome(structured, self.link(deal_id, representation, view))

    def validate(self, principal: str, args: JSON) -> Outcome:
        fetched = self.store.fetch(principal, args["deal_id"], codecs.DEFAULT_REPRESENTATION)
        report = validate(fetched.envelope)
        structured = {
            "deal_id": fetched.row.deal_id,
            "resource_uri": codecs.resource_uri(fetched.row.deal_id),
            "semantic_digest": fetched.digest,
            **report,
        }
        return Outcome(structured)

    def convert(self, principal: str, args: JSON) -> Outcome:
        target = args["target_representation"]
        self._selection(target, None)
        source = args.get("source_representation")
        if source is not None:
            self._selection(source, None)
        fetched = self.store.fetch(principal, args["deal_id"], target)
        self.encoded(fetched.envelope, target)  # decoded once above, encoded through the target codec
        structured = self.metadata(fetched.row.deal_id, fetched.digest, target, None)
        structured["source_representation"] = fetched.row.representation
        return Outcome(structured, self.link(fetched.row.deal_id, target, None))

    def apply_edit(self, principal: str, args: JSON) -> Outcome:
        receipt = self.store.apply_edit(
            principal, args["deal_id"], args.get("if_match"), args["operation"], args["context"]
        )
        link = self.link(receipt["deal_id"], codecs.DEFAULT_REPRESENTATION, None, updated=True)
        return Outcome(receipt, link)

    def list_representations(self, principal: str, args: JSON) -> Outcome:
        return Outcome(representations())

    def run(self, name: str, principal: str, args: JSON) -> Outcome:
        handler = {
            GET_DOCUMENT: self.get_document,
            VALIDATE: self.validate,
            CONVERT: self.convert,
            APPLY_EDIT: self.apply_edit,
            LIST_REPRESENTATIONS: self.list_representations,
        }[name]
        return handler(principal, args)

    # ----------------------------------------------------------------- results

    def result(self, outcome: Outcome) -> types.CallToolResult:
        """structuredContent plus one compact JSON text block of the same value, then the resource link."""
        content: list[Any] = [types.TextContent(type="text", text=self.text_block(outcome.structured))]
        if outcome.link is not None:
            link = outcome.link
            content.append(
                types.ResourceLink(
                    type="resource_link",
                    uri=link["uri"],
                    name=link["name"],
                    title=link["title"],
                    description=link["description"],
                    mime_type=link["mimeType"],
                )
            )
        return types.CallToolResult(content=content, structured_content=outcome.structured, is_error=False)

    def text_block(self, structured: JSON) -> str:
        return compact(structured)

    def refusal(self, exc: ServiceError) -> types.CallToolResult:
        """isError with `{ok, code, status, message, ...details}` as structuredContent and as compact text."""
        return structured_result(exc.body(), error=True)

    # ----------------------------------------------------------------- resources

    def read_resource(
        self, principal: str, uri: str
    ) -> types.TextResourceContents | types.BlobResourceContents:
        selection = codecs.parse_uri(uri)
        if selection is None:
            raise ServiceError(404, "RESOURCE_NOT_FOUND", "No UW deal resource has this URI.")
        representation, view = self._selection(selection.representation, selection.view)
        fetched = self.store.fetch(principal, selection.deal_id, view or representation)
        if view:
            text = self.view_text(fetched.envelope, view)
            return types.TextResourceContents(uri=uri, mime_type=codecs.CSV_MEDIA_TYPE, text=text)
        media = codecs.REPRESENTATIONS[representation]["media_type"]
        encoded = self.encoded(fetched.envelope, representation)
        if isinstance(encoded, bytes):
            return types.BlobResourceContents(uri=uri, mime_type=media, blob=codecs.blob(encoded))
        return types.TextResourceContents(uri=uri, mime_type=media, text=encoded)

    def resources(self, principal: str) -> list[types.Resource]:
        return [
            types.Resource(
                uri=codecs.resource_uri(deal_id),
                name=deal_id,
                title=f"UW deal {deal_id}",
                mime_type=codecs.REPRESENTATIONS[codecs.DEFAULT_REPRESENTATION]["media_type"],
            )
            for deal_id in self.store.visible(principal)
        ]


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def _argument_problem(tool: str, validator: jsonschema.protocols.Validator, args: JSON) -> str | None:
    error = best_match(validator.iter_errors(args))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return _clip(
        f"Invalid arguments for tool '{tool}'" + (f" at '/{where}'" if where else "") + f": {error.message}"
    )


def _argument_hygiene(value: Any, depth: int = 0) -> str | None:
    """What no entry point accepts even when the schema would: strings that are not UTF-8 (lone
    surrogates), numbers JSON cannot carry (NaN, Infinity), nesting deeper than the codecs handle."""
    if depth > 32:
        return "Arguments nest too deeply."
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "A string argument is not valid UTF-8 (it holds a lone surrogate)."
    elif isinstance(value, float) and not math.isfinite(value):
        return "A number argument is not finite."
    elif isinstance(value, dict):
        for key, item in value.items():
            problem = _argument_hygiene(key, depth + 1) or _argument_hygiene(item, depth + 1)
            if problem:
                return problem
    elif isinstance(value, list):
        for item in value:
            problem = _argument_hygiene(item, depth + 1)
            if problem:
                return problem
    return None


def _resource_error(protocol_version: str, exc: ServiceError, uri: str) -> MCPError:
    """A refused read as a JSON-RPC error whose data carries the status and code (C-1 rule 1)."""
    modern = protocol_version in MODERN_PROTOCOL_VERSIONS
    code = RESOURCE_NOT_FOUND_LEGACY if exc.status == 404 and not modern else types.INVALID_PARAMS
    data = {**exc.body(), "uri": _clip(uri)}
    return MCPError(code=code, message=exc.message, data=data)


def build_server(service: UwmdService) -> Server[Any]:
    """A low-level SDK server with the five tools and the deal resources; both eras, like the base one."""
    definitions = tool_definitions()
    listed = [
        types.Tool(
            name=t["name"],
            title=t.get("title"),
            description=t["description"],
            input_schema=t["inputSchema"],
            annotations=types.ToolAnnotations(
                read_only_hint=t["annotations"].get("readOnlyHint"),
                destructive_hint=t["annotations"].get("destructiveHint"),
                idempotent_hint=t["annotations"].get("idempotentHint"),
                open_world_hint=t["annotations"].get("openWorldHint"),
            )
            if "annotations" in t
            else None,
        )
        for t in service.tools()
    ]
    validators = format_validators(definitions)
    schemas_by_name = {t["name"]: t["inputSchema"] for t in definitions}
    template = types.ResourceTemplate(
        uri_template=codecs.TEMPLATE,
        name="uw-deal",
        title="UW deal",
        description="A UW deal: uw-json by default, another representation or a named view by query.",
        mime_type=codecs.REPRESENTATIONS[codecs.DEFAULT_REPRESENTATION]["media_type"],
    )

    list_tools = one_page_tools(listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name = params.name
        if name not in validators:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {_clip(name)}")
        arguments: JSON = dict(params.arguments or {})
        unsafe = _argument_hygiene(arguments)
        if unsafe is not None:
            return service.refusal(ServiceError(400, "BINDING_INVALID_ARGUMENT", unsafe))
        problem = _argument_problem(name, validators[name], arguments)
        if problem is not None:
            body = {"ok": False, "code": "invalid_argument", "status": 400, "message": problem}
            refuse_before_sep1303(ctx.protocol_version, problem, body)
            return service.refusal(ServiceError(400, "invalid_argument", problem))
        principal = service.principal(ctx)
        try:
            outcome = await anyio.to_thread.run_sync(service.run, name, principal, arguments)
        except ServiceError as exc:
            return service.refusal(exc)
        return service.result(outcome)

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        refuse_cursor(params)
        principal = service.principal(ctx)
        return types.ListResourcesResult(
            resources=await anyio.to_thread.run_sync(service.resources, principal)
        )

    async def list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        refuse_cursor(params)
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        principal = service.principal(ctx)
        if _argument_hygiene(params.uri) is not None:
            exc = ServiceError(400, "BINDING_INVALID_ARGUMENT", "The URI is not valid UTF-8.")
            raise _resource_error(ctx.protocol_version, exc, "") from None
        try:
            contents = await anyio.to_thread.run_sync(service.read_resource, principal, params.uri)
        except ServiceError as exc:
            raise _resource_error(ctx.protocol_version, exc, params.uri) from None
        return types.ReadResourceResult(contents=[contents])

    return reference_server(
        "mcp-conformance-uwmd-reference",
        handlers=(list_tools, call_tool, list_resources, list_resource_templates, read_resource),
        title="MCP conformance reference UW Markdown binding server",
        instructions=(
            "Reference target of the uwmd suite. Prefer a named view (get_document with view) before the "
            "complete envelope; read documents through their resource links."
        ),
        tool_input_schema=schemas_by_name.get,
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = stateful_parser(
        "python -m conformance_reference.uwmd_server",
        "Run the reference UW Markdown MCP binding server (stdio by default).",
    )
    parser.add_argument(
        "--principal",
        default=os.environ.get(ENV_PRINCIPAL, PRIMARY),
        help=f"the principal a request naming none acts as (default ${ENV_PRINCIPAL} or {PRIMARY})",
    )
    return parser.parse_args(argv)


def main(
    argv: Sequence[str] | None = None,
    *,
    store_class: type[UwmdStore] = UwmdStore,
    service_class: type[UwmdService] = UwmdService,
) -> int:
    """CLI entry point; `store_class`/`service_class` let the project's tests plant one defect each."""
    args = parse_args(argv)
    return serve_with_state(
        args, "uwmd-reference-", lambda path: build_server(service_class(store_class(path), args.principal))
    )


if __name__ == "__main__":
    sys.exit(main())
