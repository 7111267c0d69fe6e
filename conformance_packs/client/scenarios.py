"""The official client scenarios the harness plays, by their contract names (`MCP_CONFORMANCE_SCENARIO`).

Each offers what the official scenario server offers (its tools, their schemas, its answers), so a
client program written for the official suite acts the same here; what each check reads of the client's
messages is in the check modules.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

from conformance.pack_api import (
    LEGACY_REVISIONS,
    NO_ANSWER,
    Arrival,
    HttpAnswer,
    Message,
    Peer,
    Refusal,
    Scenario,
    scenario,
)

#: The newest revision of each era the official suite freezes a client set for.
STATEFUL = "2025-11-25"
STATELESS = "2026-07-28"
EMPTY_INPUT = {"type": "object", "properties": {}, "required": []}


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


@scenario
class Initialize(Scenario):
    """The handshake: initialize answered, then whatever the client lists."""

    name = "initialize"
    description = "the client's initialize request, its initialized notification, and the headers after"
    revisions = LEGACY_REVISIONS
    capabilities: ClassVar[Mapping[str, Any]] = {}


@scenario
class ToolsCall(Scenario):
    """One tool, `add_numbers(a, b)`, which the client calls with two numbers."""

    name = "tools_call"
    description = "the client calls add_numbers with two numbers"
    tools = (
        {
            "name": "add_numbers",
            "description": "Add two numbers together",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "a": {"type": "number", "description": "First number"},
                    "b": {"type": "number", "description": "Second number"},
                },
                "required": ["a", "b"],
            },
        },
    )

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        if name != "add_numbers":
            return await super().call_tool(name, arguments, message, peer)
        a, b = (arguments.get("a"), arguments.get("b")) if isinstance(arguments, dict) else (None, None)
        if (
            not isinstance(a, int | float)
            or not isinstance(b, int | float)
            or isinstance(a, bool)
            or isinstance(b, bool)
        ):
            return {**text_result("a and b must be numbers"), "isError": True}
        return text_result(f"The sum of {a} and {b} is {a + b}")


#: The form SEP-1034's scenario asks for: every field optional, each with a default.
DEFAULTS_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}


@scenario
class ElicitationDefaults(Scenario):
    """A tool whose call asks the client to fill a form whose fields all have defaults (SEP-1034)."""

    name = "elicitation-sep1034-client-defaults"
    description = "the client applies the defaults of an elicitation form's omitted fields"
    revisions = (STATEFUL,)
    tools = (
        {
            "name": "test_client_elicitation_defaults",
            "description": "Tests that client applies defaults for omitted elicitation fields",
            "inputSchema": EMPTY_INPUT,
        },
    )

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        if name != "test_client_elicitation_defaults":
            return await super().call_tool(name, arguments, message, peer)
        params = {
            "message": "Test client default value handling - please accept with defaults",
            "requestedSchema": DEFAULTS_SCHEMA,
        }
        answer = await peer.ask("elicitation/create", params)
        return text_result(f"elicitation answered: {'result' in answer and answer['result'].get('action')}")


#: The retry field the SSE retry scenario sends, in milliseconds, and how soon it closes the stream.
RETRY_MS = 500
CLOSE_AFTER = 0.05


@scenario
class SseRetry(Scenario):
    """tools/call answered by an event stream that primes an event ID and a retry field, then closes
    without the answer; the answer is given on the GET stream the client reconnects with (SEP-1699)."""

    name = "sse-retry"
    description = "the client reconnects after the retry field's wait, with Last-Event-ID"
    revisions = (STATEFUL,)
    transports = ("http",)
    tools = (
        {
            "name": "test_reconnection",
            "description": "A tool that triggers SSE stream closure to test client reconnection behavior",
            "inputSchema": EMPTY_INPUT,
        },
    )

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.pending: Any = None
        self.events = 0

    def _priming(self) -> bytes:
        self.events += 1
        return f"id: event-{self.events}\nretry: {RETRY_MS}\ndata: \n\n".encode()

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        if name != "test_reconnection":
            return await super().call_tool(name, arguments, message, peer)
        self.pending = message.value.get("id")
        await peer.event(self._priming())
        # the ID a resuming GET names, told from a standalone GET stream's own (each is primed too)
        self.recording.facts["closed_event_id"] = f"event-{self.events}"
        await asyncio.sleep(CLOSE_AFTER)
        # marked before the close is written: the earliest instant the client could see it
        self.recording.mark("stream-closed")
        await peer.close()
        return NO_ANSWER

    async def on_get(self, peer: Peer) -> bool:
        self.recording.mark(f"get-{len([k for k in self.recording.marks if k.startswith('get-')]) + 1}")
        # the GET being served is the latest arrival (nothing awaited since the transport recorded it)
        said = self.recording.arrivals[-1].headers.get("last-event-id")
        await peer.event(self._priming())
        # the answer goes on the closed stream's resumption only, never on a standalone GET stream
        # reconnecting with its own last event (MUST NOT: a response unless resuming its stream); a
        # GET naming no event may be the resumption without the header (CLIENT-SSE-003 judges that)
        if self.pending is not None and said in (None, self.recording.facts.get("closed_event_id")):
            answer = {
                "jsonrpc": "2.0",
                "id": self.pending,
                "result": text_result("Reconnection test completed"),
            }
            self.pending = None
            self.events += 1
            await peer.send(answer)
        await peer.close()
        return True


#: The error code of 2026-07-28's UnsupportedProtocolVersionError.
UNSUPPORTED_VERSION = -32022


@scenario
class RequestMetadata(Scenario):
    """2026-07-28's per-request `_meta` and version header; the first request is refused as an
    unsupported version, naming the one supported, which the client should retry with (SEP-2575)."""

    name = "request-metadata"
    description = (
        "every request carries _meta and the MCP-Protocol-Version header; a refused version is retried"
    )
    revisions = (STATELESS,)
    transports = ("http", "stdio")

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.refused = False
        self.refused_method: str | None = None

    def may_give_up(self) -> str:
        """ "The client SHOULD select a mutually supported version from the supported list and retry the
        request, or surface an error to the user if no compatible version exists": a client that
        surfaces the refusal of a 2026-07-28 request as an error (and exits non-zero) missed at most
        that SHOULD, which CLIENT-META-005 judges. A refused initialize is no 2026-07-28 request."""
        if self.refused and self.refused_method != "initialize":
            return (
                "its first request was refused as an unsupported version, which it may surface as an "
                "error; whether it retried is CLIENT-META-005's"
            )
        return ""

    async def answer(self, message: Message, peer: Peer) -> Any:
        if not self.refused:
            self.refused, self.refused_method = True, message.method
            meta = message.params.get("_meta") if isinstance(message.params, dict) else None
            asked = meta.get("io.modelcontextprotocol/protocolVersion") if isinstance(meta, dict) else None
            data = {
                "supported": [STATELESS],
                "requested": str(message.arrival.headers.get("mcp-protocol-version") or asked or ""),
            }
            return Refusal(UNSUPPORTED_VERSION, "Unsupported protocol version", data, status=400)
        return await super().answer(message, peer)


@scenario
class HttpStandardHeaders(Scenario):
    """A tool, a resource and a prompt, so each method whose request names one is sent (SEP-2243)."""

    name = "http-standard-headers"
    description = (
        "every POST carries Mcp-Method, and Mcp-Name where the request names a tool, resource or prompt"
    )
    revisions = (STATELESS,)
    transports = ("http",)
    capabilities: ClassVar[Mapping[str, Any]] = {"tools": {}, "resources": {}, "prompts": {}}
    tools = (
        {
            "name": "test_headers",
            "description": "A tool used to test HTTP headers",
            "inputSchema": EMPTY_INPUT,
        },
        {
            "name": "my-hyphenated-tool",
            "description": "A hyphenated name in Mcp-Name",
            "inputSchema": EMPTY_INPUT,
        },
    )
    resource = {"uri": "test://headers/resource", "name": "headers-resource", "mimeType": "text/plain"}
    prompt = {"name": "test_prompt", "description": "A prompt used to test HTTP headers"}

    async def answer(self, message: Message, peer: Peer) -> Any:
        method = message.method
        if method == "resources/list":
            return {"resources": [self.resource]}
        if method == "resources/read":
            return {"contents": [{"uri": self.resource["uri"], "mimeType": "text/plain", "text": "headers"}]}
        if method == "prompts/list":
            return {"prompts": [self.prompt]}
        if method == "prompts/get":
            return {"messages": [{"role": "user", "content": {"type": "text", "text": "headers"}}]}
        return await super().answer(message, peer)

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        return text_result(f"called {name}")


#: The elicitation each multi-round tool asks for, as an input request (SEP-2322).
CONFIRM = {
    "method": "elicitation/create",
    "params": {
        "message": "Please confirm to continue",
        "requestedSchema": {"type": "object", "properties": {"confirmed": {"type": "boolean"}}},
    },
}
MRTR_TOOLS = ("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type")


@scenario
class RequestState(Scenario):
    """2026-07-28's multi-round requests (SEP-2322): a tool answered `input_required` with an opaque
    `requestState`, one without it, one to call in between, and one whose result has no resultType."""

    name = "sep-2322-client-request-state"
    description = "the client retries a multi-round request with a new id, the state echoed, and nothing more"
    revisions = (STATELESS,)
    transports = ("http", "stdio")
    tools = tuple({"name": name, "description": name, "inputSchema": EMPTY_INPUT} for name in MRTR_TOOLS)

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        retried = isinstance(message.params, dict) and "inputResponses" in message.params
        if name not in MRTR_TOOLS:
            return await super().call_tool(name, arguments, message, peer)
        if name == "test_mrtr_no_result_type":
            return {**text_result("no resultType here"), "resultType": None}
        if name == "test_mrtr_unrelated" or retried:
            return text_result(f"{name} ok")
        asked: dict[str, Any] = {"resultType": "input_required", "inputRequests": {"confirm": CONFIRM}}
        if name == "test_mrtr_echo_state":
            asked["requestState"] = self.recording.facts.setdefault("request_state", f"opaque:{uuid.uuid4()}")
        return asked

    def may_give_up(self) -> str:
        """test_mrtr_no_result_type's result lacks the resultType that "Servers implementing this
        protocol version MUST include"; the client MUST take it as complete only "when a client receives
        a result from a server implementing an earlier protocol version", and this one implements
        2026-07-28. A client that refuses it (and exits non-zero) is right once it has called it."""
        called = [m for m in self.recording.requests("tools/call") if isinstance(m.params, dict)]
        if any(m.params.get("name") == "test_mrtr_no_result_type" for m in called):
            return (
                "it called test_mrtr_no_result_type, whose result lacks the resultType a 2026-07-28 "
                "server MUST send, and may refuse that result"
            )
        return ""


def _annotated(name: str, kind: str, header: str | None, description: str = "") -> dict[str, Any]:
    schema: dict[str, Any] = {"type": kind, "description": description or name}
    if header is not None:
        schema["x-mcp-header"] = header
    return schema


#: test_custom_headers's parameters: (name, JSON type, its x-mcp-header or None, the value called with).
CUSTOM_PARAMS: tuple[tuple[str, str, str | None, Any], ...] = (
    ("region", "string", "Region", "us-west1"),
    ("priority", "integer", "Priority", 42),
    ("verbose", "boolean", "Verbose", False),
    ("debug", "boolean", "Debug", True),
    ("empty_val", "string", "EmptyVal", ""),
    ("method_val", "string", "Method", "test-method"),
    ("float_val", "number", None, 3.14159),
    ("non_ascii_val", "string", "NonAscii", "Hello, 世界"),
    ("whitespace_val", "string", "Whitespace", " padded "),
    ("leading_space_val", "string", "LeadingSpace", " us-west1"),
    ("trailing_space_val", "string", "TrailingSpace", "us-west1 "),
    ("internal_space_val", "string", "InternalSpace", "us west 1"),
    ("control_char_val", "string", "ControlChar", "line1\nline2"),
    ("crlf_val", "string", "CrLf", "line1\r\nline2"),
    ("tab_val", "string", "Tab", "\tindented"),
    ("query", "string", None, "SELECT * FROM users"),
)
#: test_custom_headers_null's, the annotated `verbose` called with null.
NULL_PARAMS: tuple[tuple[str, str, str | None, Any], ...] = (
    ("region", "string", "Region", "us-east1"),
    ("priority", "integer", "Priority", 1),
    ("verbose", "boolean", "Verbose", None),
    ("query", "string", None, "SELECT 1"),
)


def _tool(name: str, params: Any) -> dict[str, Any]:
    properties = {p[0]: _annotated(p[0], p[1], p[2]) for p in params}
    schema = {"type": "object", "properties": properties, "required": ["region", "priority", "query"]}
    return {"name": name, "description": name, "inputSchema": schema}


@scenario
class HttpCustomHeaders(Scenario):
    """A tool whose parameters carry x-mcp-header annotations, called with the arguments the context
    gives: plain, numeric, boolean, empty, unsafe (non-ASCII, whitespace, control characters) and
    unannotated values, then again with a null (SEP-2243)."""

    name = "http-custom-headers"
    description = "annotated parameters are mirrored into Mcp-Param-* headers, encoded, null ones left out"
    revisions = (STATELESS,)
    transports = ("http",)
    tools = (
        _tool("test_custom_headers", CUSTOM_PARAMS),
        _tool("test_custom_headers_null", NULL_PARAMS),
    )
    context = {
        "toolCalls": [
            {"name": "test_custom_headers", "arguments": {p[0]: p[3] for p in CUSTOM_PARAMS}},
            {"name": "test_custom_headers_null", "arguments": {p[0]: p[3] for p in NULL_PARAMS}},
        ]
    }

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        return text_result(f"called {name}")


def _one(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "description": name,
        "inputSchema": {"type": "object", "properties": properties, "required": list(properties)},
    }


#: Tools whose x-mcp-header annotations break a rule a client must reject them for, by the rule.
INVALID_TOOLS = {
    "invalid_empty_header": ("not-empty", {"value": _annotated("value", "string", "")}),
    "invalid_object_header": ("primitive-only", {"data": _annotated("data", "object", "Data")}),
    "invalid_array_header": (
        "primitive-only",
        {"items": {"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}},
    ),
    "invalid_null_header": ("primitive-only", {"nil": _annotated("nil", "null", "Nil")}),
    "invalid_duplicate_same_case": (
        "unique",
        {"field1": _annotated("f", "string", "Region"), "field2": _annotated("f", "string", "Region")},
    ),
    "invalid_duplicate_diff_case": (
        "unique",
        {"field1": _annotated("f", "string", "MyField"), "field2": _annotated("f", "string", "myfield")},
    ),
    "invalid_space_in_name": ("charset", {"value": _annotated("value", "string", "My Region")}),
    "invalid_colon_in_name": ("charset", {"value": _annotated("value", "string", "Region:Primary")}),
    "invalid_non_ascii_name": ("charset", {"value": _annotated("value", "string", "Région")}),
    "invalid_control_char_name": ("charset", {"value": _annotated("value", "string", "Region\t1")}),
}


@scenario
class HttpInvalidToolHeaders(Scenario):
    """One valid tool and ten whose x-mcp-header annotations are invalid (empty, not a token, repeated,
    on a non-primitive): the client keeps the valid one and calls none of the others (SEP-2243)."""

    name = "http-invalid-tool-headers"
    description = "tools with invalid x-mcp-header annotations are rejected, the valid one kept"
    revisions = (STATELESS,)
    transports = ("http",)
    tools = (
        _one("valid_tool", {"region": _annotated("region", "string", "Region")}),
        *(_one(name, properties) for name, (_, properties) in INVALID_TOOLS.items()),
    )

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        return text_result(f"called {name}")


#: The path of the canary a network $ref names: any request for it is a dereference (SEP-2106).
CANARY_PATH = "/canary/profile-schema.json"


@scenario
class JsonSchemaRefNoDeref(Scenario):
    """A tool whose inputSchema has a same-document $ref and a $ref to a network URI (a canary on the
    scenario server): the client may list and use it, but must not fetch the canary (SEP-2106)."""

    name = "json-schema-ref-no-deref"
    description = "a network $ref in a tool's inputSchema is not dereferenced"
    revisions = (STATELESS,)
    transports = ("http",)

    async def on_http(self, arrival: Arrival) -> HttpAnswer | None:
        """The canary is a schema, so a client that fetches it is not stopped by an error."""
        if arrival.path.split("?")[0] != CANARY_PATH:
            return None
        return HttpAnswer(200, {"Content-Type": "application/schema+json"}, b'{"type": "object"}')

    async def answer(self, message: Message, peer: Peer) -> Any:
        if message.method != "tools/list":
            return await super().answer(message, peer)
        canary = str(self.recording.facts.get("origin", "http://127.0.0.1:9")) + CANARY_PATH
        schema = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"userId": {"type": "string", "pattern": "^[a-z0-9-]+$"}},
            "properties": {"id": {"$ref": "#/$defs/userId"}, "profile": {"$ref": canary}},
            "required": ["id"],
        }
        return {
            "tools": [
                {"name": "lookup_user", "description": "Look up a user profile by id", "inputSchema": schema}
            ]
        }

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        return text_result(f"called {name}")


#: A tool schema with the 2020-12 vocabulary SEP-1613 and SEP-2106 let a tool use: a dialect, $defs
#: with an $anchor, a same-document $ref, composition, conditionals and additionalProperties.
SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}
ECHO_TOOL = "json_schema_echo"


@scenario
class JsonSchemaPreservation(Scenario):
    """A tool with the 2020-12 vocabulary and an echo tool the client passes that tool's inputSchema
    back to, as it holds it: what its parsing kept (SEP-1613, SEP-2106)."""

    name = "json-schema-2020-12-preservation"
    description = "a tool's 2020-12 inputSchema reaches the client unchanged"
    revisions = (STATEFUL, STATELESS)
    transports = ("http", "stdio")
    tools = (
        {
            "name": "json_schema_2020_12_tool",
            "description": "2020-12 features",
            "inputSchema": SCHEMA_2020_12,
        },
        {
            "name": ECHO_TOOL,
            "description": "Echoes back the inputSchema the client holds for json_schema_2020_12_tool",
            "inputSchema": {
                "type": "object",
                "properties": {"schema": {"type": "object"}},
                "required": ["schema"],
            },
        },
    )

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        return text_result(f"called {name}")
