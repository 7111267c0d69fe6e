"""A small MCP server written on raw JSON lines (no SDK), for proving the base suite's checks.

With no `--defect` it is conformant in both eras, over stdio and (2026-07-28 only) over HTTP; each
`--defect NAME` plants exactly one fault that a base check must catch. Defects the SDK refuses to
produce (a wrong id, a missing `jsonrpc`, garbage on stdout) are why this server exists.

    python -m tests.servers.raw_server [--http] [--defect NAME]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jsonschema

LEGACY = ("2025-06-18", "2025-11-25")
MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"

DEFECTS = {
    "none": "conformant",
    "wrong-id": "answers tools/list with an id off by one",
    "no-jsonrpc": "omits the jsonrpc member from every response",
    "result-and-error": "puts both result and error in tools/list responses",
    "schema-violation": "echo returns structuredContent that violates its outputSchema",
    "text-differs": "echo's JSON text block differs from structuredContent",
    "unknown-tool-success": "answers a call of an unknown tool with a successful result",
    "mismatch-legacy-code": "over HTTP, refuses a header that disagrees with the body with 400 and -32600,"
    " not HeaderMismatchError -32020",
    "unknown-tool-text": "answers a call of an unknown tool with isError false and the refusal in its text"
    ' ("Error: Missing arguments"), as some Go servers do',
    "stack-trace": "puts a Python traceback into the message of unknown-method errors",
    "bad-input-schema": "lists a tool whose inputSchema is not a valid JSON Schema",
    "bad-pattern": "lists a tool whose inputSchema has a pattern that is no regular expression",
    "slow-tool": "conformant: a read-only tool that takes a minute to answer (no rule bounds it)",
    "ecma-pattern": "conformant: patterns in ECMA-262 syntax Python's re rejects (\\p{L}, (?<y>)), also in"
    " echo's outputSchema",
    "cursor-loop": "the tools/list cursor points back to the first page forever",
    "third-listing-reordered": "lists its tools in reverse order on every third listing (tools/list without"
    " a cursor), the others in order",
    "stdout-garbage": "writes a log line to stdout at start",
    "stdout-binary": "writes bytes that are not UTF-8 (and a terminal escape) to stdout at start",
    "stdout-on-call": "writes a log line to stdout before answering a tools/call of echo",
    "log-on-malformed": "sends a log message (notifications/message) about a line that is not JSON, without"
    " declaring the logging capability",
    "get-200": "answers GET with 200 on its 2026-07-28-only HTTP endpoint",
    "header-name-case-sensitive": "over HTTP, finds the MCP request headers only under the names the text"
    " writes (Mcp-Method, MCP-Protocol-Version, Mcp-Name), matched with case",
    "no-parse-error": "ignores a line that is not JSON instead of answering -32700",
    "strict-args": "conformant: a read-only tool whose arguments must fit an enum, a pattern, a format,"
    " bounds and a zone it knows, and one that refuses every call (a failure the schema does not explain)",
    "strict-args-violation": "strict-args, but forecast's structuredContent violates its outputSchema",
    "unknown-method-text": "over HTTP, answers an unknown method with 400 text/plain and no JSON-RPC body"
    " (as Go SDK servers do)",
    "no-invalid-request": "ignores a message that is not a valid request, as the official SDKs do on stdio",
    "parse-error-id": 'answers a line that is not JSON with -32700 and id "server-error" (FastMCP 2 does)',
    "exit-on-malformed": "exits with status 3 on a line that is not JSON",
    "hang-on-malformed": "stops reading and answering after a line that is not JSON",
    "deaf-after-malformed": "decodes JSON across lines, as a stream decoder does: a line that is not a"
    " complete JSON value is joined to every line after it, so after a truncated object nothing is"
    " answered again (the process does not exit)",
    "deaf-after-invalid": "reads on but answers nothing more after a line that is not a valid request (not"
    " JSON, or a method that is no string), without exiting",
    "late-parse-error": "conformant: answers a line that is not JSON only after answering the next message",
    "malformed-202": "over HTTP, accepts a body that is not JSON with 202 and no body",
    "notif-error": "answers every notification with an error that has no id (a reply nothing can match)",
    "discover-no-versions": "answers server/discover without supportedVersions (it still speaks 2026-07-28)",
    "initialize-no-version": "answers initialize of a revision it speaks without protocolVersion",
    "get-silent": "over HTTP, sends no status line to a GET (the harness gives up after its timeout)",
    "ping-unanswered": "never answers ping",
    "unknown-method-32602": "answers a method of no MCP namespace with -32602, not -32601 (as mcp 1.x does)",
}
#: MCP's method namespaces (server/discover is answered before): `unknown-method-32602` answers a method of
#: another one with -32602.
MCP_NAMESPACES = frozenset(
    ("initialize", "ping", "notifications", "tools", "resources", "prompts", "logging", "completion", "tasks")
)

TOOLS = [
    {
        "name": "echo",
        "description": "Echo the text back.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": False,
        },
        "outputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
        "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]},
        "annotations": {"readOnlyHint": True},
    },
]
BROKEN_TOOL = {"name": "broken", "inputSchema": {"type": "object", "properties": {"a": {"type": "strnig"}}}}
BAD_PATTERN_TOOL = {
    "name": "bad_pattern",
    "inputSchema": {"type": "object", "properties": {"code": {"type": "string", "pattern": "([A-Z"}}},
}
ECMA_PATTERN_TOOL = {
    "name": "ecma_pattern",
    "inputSchema": {
        "type": "object",
        "properties": {
            "word": {"type": "string", "pattern": "^[\\p{L}\\p{N}]+$"},
            "date": {"type": "string", "pattern": "^(?<year>\\d{4})-(?<month>\\d{2})$"},
        },
        "patternProperties": {"^\\p{Lu}": {"type": "string"}},
    },
}
#: echo's outputSchema under "ecma-pattern": a Unicode property escape Python's re cannot run.
ECMA_ECHO_OUTPUT = {
    "type": "object",
    "properties": {"text": {"type": "string", "pattern": "^[\\p{L}\\p{N}\\s]*$"}},
    "required": ["text"],
}
SLOW_TOOL = {
    "name": "slow",
    "description": "Answers after a minute.",
    "inputSchema": {"type": "object"},
    "outputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": True},
}
#: A tool the string "x" cannot call: each argument must fit its schema, and the zone must be one this
#: server knows, though the schema cannot say so (as a real time server refuses "x" as a time zone).
STRICT_TOOL = {
    "name": "forecast",
    "description": "The forecast for a station and day.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "station": {"type": "string", "pattern": "^[A-Z]{4}$"},
            "day": {"type": "string", "format": "date"},
            "days": {"type": "integer", "minimum": 3, "maximum": 7},
            "zone": {
                "type": "string",
                "description": "IANA zone of the station (e.g. 'America/Nuuk', 'Europe/Paris')",
            },
            "at": {"type": "string", "description": "Local time as HH:MM"},
            "where": {
                "type": "object",
                "properties": {"lat": {"type": "number", "minimum": -90, "maximum": 90}},
                "required": ["lat"],
                "additionalProperties": False,
            },
            "tags": {"type": "array", "items": {"enum": ["rain", "wind"]}, "minItems": 1},
        },
        "required": ["unit", "station", "day", "days", "zone", "at", "where", "tags"],
        "additionalProperties": False,
    },
    "outputSchema": {
        "type": "object",
        "properties": {"station": {"type": "string"}, "high": {"type": "number"}},
        "required": ["station", "high"],
    },
    "annotations": {"readOnlyHint": True},
}
#: Zones the forecast tool knows (America/Nuuk, the description's first example, is not one of them).
KNOWN_ZONES = ("Europe/Paris", "Asia/Tokyo")
#: A read-only tool that refuses every call: its failure is no fault the harness may hold against it.
REFUSING_TOOL = {
    "name": "archive",
    "description": "Past observations; the archive is offline.",
    "inputSchema": {"type": "object", "properties": {"day": {"type": "string"}}, "required": ["day"]},
    "annotations": {"readOnlyHint": True},
}
EXTRA_TOOLS: dict[str, Any] = {
    "strict-args": [STRICT_TOOL, REFUSING_TOOL],
    "strict-args-violation": [STRICT_TOOL, REFUSING_TOOL],
    "slow-tool": SLOW_TOOL,
    "bad-input-schema": BROKEN_TOOL,
    "bad-pattern": BAD_PATTERN_TOOL,
    "ecma-pattern": ECMA_PATTERN_TOOL,
}
SERVER_INFO = {"name": "raw-reference", "version": "1.0.0"}
RESOURCE = {"uri": "raw://docs/readme", "name": "readme", "mimeType": "text/plain"}
TEMPLATE = {"uriTemplate": "raw://items/{id}", "name": "item"}


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class Unanswered(Exception):
    """The request is left without any answer (a defect)."""


class Server:
    def __init__(self, defect: str) -> None:
        self.defect = defect
        self.revision: str | None = None
        #: Listings begun so far (a tools/list without a cursor), for `third-listing-reordered`.
        self.listings = 0

    def handle_line(self, line: bytes) -> dict[str, Any] | None:
        try:
            message = json.loads(line)
        except ValueError:
            if self.defect == "no-parse-error":
                return None
            if self.defect == "hang-on-malformed":
                time.sleep(3600)  # the harness gives up after its timeout; its close kills the process
            if self.defect == "exit-on-malformed":
                sys.stderr.write(f"fatal: cannot parse {line[:40]!r}\n")
                sys.exit(3)
            msg_id = "server-error" if self.defect == "parse-error-id" else None
            return self.envelope(
                {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32700, "message": "Parse error"}}
            )
        return self.handle(message)

    def handle(self, message: Any, headers: dict[str, str] | None = None) -> dict[str, Any] | None:
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            if self.defect == "no-invalid-request":
                return None
            msg_id = message.get("id") if isinstance(message, dict) else None
            return self.envelope(
                {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32600, "message": "Invalid Request"}}
            )
        if "id" not in message:
            if self.defect == "notif-error":
                error = {"code": -32601, "message": "Method not found"}
                return self.envelope({"jsonrpc": "2.0", "error": error})
            return None  # notifications need no answer
        method, params, msg_id = message["method"], message.get("params") or {}, message["id"]
        try:
            result = self.dispatch(method, params, headers)
        except Unanswered:
            return None
        except RpcError as exc:
            error: dict[str, Any] = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
            return self.envelope({"jsonrpc": "2.0", "id": msg_id, "error": error})
        response: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "result": result}
        if method == "tools/list":
            if self.defect == "wrong-id" and isinstance(msg_id, int):
                response["id"] = msg_id + 1
            if self.defect == "result-and-error":
                response["error"] = {"code": -32603, "message": "also an error"}
        return self.envelope(response)

    def envelope(self, response: dict[str, Any]) -> dict[str, Any]:
        if self.defect == "no-jsonrpc":
            response.pop("jsonrpc", None)
        return response

    def modern(self, params: dict[str, Any]) -> bool:
        meta = params.get("_meta")
        return isinstance(meta, dict) and META_VERSION in meta

    def dispatch(self, method: str, params: dict[str, Any], headers: dict[str, str] | None) -> dict[str, Any]:
        modern = self.modern(params)
        if modern:
            meta = params["_meta"]
            if META_CAPS not in meta:
                raise RpcError(-32602, "params._meta lacks clientCapabilities")
            if meta[META_VERSION] != MODERN:
                raise RpcError(
                    -32022,
                    "Unsupported protocol version",
                    {"requested": meta[META_VERSION], "supported": [MODERN, *LEGACY]},
                )
        revision = MODERN if modern else (self.revision or LEGACY[-1])
        if method == "initialize":
            asked = params.get("protocolVersion")
            self.revision = asked if asked in LEGACY else LEGACY[-1]
            answer = {
                "protocolVersion": self.revision,
                "capabilities": {"tools": {}, "resources": {}},
                "serverInfo": {"name": "raw-reference", "version": "1.0.0"},
            }
            if self.defect == "initialize-no-version" and asked == self.revision:
                del answer["protocolVersion"]
            return answer
        result = self.method(method, params, revision)
        if modern:
            result["resultType"] = "complete"
            if method in (
                "server/discover",
                "tools/list",
                "resources/list",
                "resources/templates/list",
                "resources/read",
            ):
                result.update(cacheScope="public", ttlMs=0)
            result.setdefault("_meta", {})["io.modelcontextprotocol/serverInfo"] = SERVER_INFO
        return result

    def method(self, method: str, params: dict[str, Any], revision: str) -> dict[str, Any]:
        if method == "server/discover":
            discovered = {
                "supportedVersions": [MODERN, *LEGACY],
                "capabilities": {"tools": {}, "resources": {}},
                "_meta": {
                    "io.modelcontextprotocol/serverInfo": {"name": "raw-reference", "version": "1.0.0"}
                },
            }
            if self.defect == "discover-no-versions":
                del discovered["supportedVersions"]
            return discovered
        if method == "ping":
            if self.defect == "ping-unanswered":
                raise Unanswered
            return {}
        if method == "tools/list":
            return self.tools_page(params.get("cursor"))
        if method == "tools/call":
            return self.call(params, revision)
        if method in ("resources/list", "resources/templates/list") and params.get("cursor") is not None:
            raise RpcError(-32602, "Invalid cursor")  # one page each: no cursor was ever given
        if method == "resources/list":
            return {"resources": [RESOURCE]}
        if method == "resources/templates/list":
            return {"resourceTemplates": [TEMPLATE]}
        if method == "resources/read":
            uri = params.get("uri")
            if uri == RESOURCE["uri"] or (isinstance(uri, str) and uri.startswith("raw://items/")):
                return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "hello"}]}
            # 2026-07-28 retired -32002 for -32602 (basic/index, Error Codes).
            raise RpcError(-32602 if revision == MODERN else -32002, "Resource not found", {"uri": uri})
        if self.defect == "unknown-method-32602" and method.split("/")[0] not in MCP_NAMESPACES:
            raise RpcError(-32602, f"Invalid params: no method {method}")
        trace = ""
        if self.defect == "stack-trace":
            trace = (
                '\nTraceback (most recent call last):\n  File "/srv/raw/server.py", line 88, in dispatch\n'
                "KeyError: 'method'"
            )
        raise RpcError(-32601, "Method not found" + trace)

    def tools_page(self, cursor: Any) -> dict[str, Any]:
        extra = EXTRA_TOOLS.get(self.defect, [])
        tools = [*TOOLS, *(extra if isinstance(extra, list) else [extra])]
        if self.defect == "ecma-pattern":
            tools = [{**t, "outputSchema": ECMA_ECHO_OUTPUT} if t["name"] == "echo" else t for t in tools]
        self.listings += cursor is None
        if self.defect == "third-listing-reordered" and self.listings % 3 == 0:
            tools = tools[::-1]
        if cursor is None:
            index = 0
        elif isinstance(cursor, str) and cursor.isdigit() and int(cursor) < len(tools):
            index = int(cursor)
        else:
            raise RpcError(-32602, "Invalid cursor")
        page: dict[str, Any] = {"tools": [tools[index]]}
        if index + 1 < len(tools):
            page["nextCursor"] = str(index + 1)
        elif self.defect == "cursor-loop":
            page["nextCursor"] = "0"
        return page

    def call(self, params: dict[str, Any], revision: str) -> dict[str, Any]:
        name, args = params.get("name"), params.get("arguments") or {}
        if name == "slow" and self.defect == "slow-tool":
            time.sleep(60)  # the harness gives up long before; its close kills the process
        if self.defect.startswith("strict-args") and name in ("forecast", "archive"):
            return self.strict_call(name, args)
        tool = next((t for t in TOOLS if t["name"] == name), None)
        if tool is None:
            if self.defect == "unknown-tool-success":
                return {"content": [{"type": "text", "text": "done"}]}
            if self.defect == "unknown-tool-text":
                return {"content": [{"type": "text", "text": "Error: Missing arguments"}], "isError": False}
            raise RpcError(-32602, f"Unknown tool: {name}")
        problem = self.invalid(tool["inputSchema"], args)
        if problem:
            if revision == "2025-06-18":
                raise RpcError(-32602, f"Invalid arguments: {problem}")
            return {"content": [{"type": "text", "text": f"Invalid arguments: {problem}"}], "isError": True}
        if name == "echo":
            structured: dict[str, Any] = {"text": args["text"]}
            if self.defect == "schema-violation":
                structured = {"text": 42}
        else:
            structured = {"sum": args["a"] + args["b"]}
        text = json.dumps(structured, separators=(",", ":"))
        if self.defect == "text-differs":
            text = json.dumps({**structured, "extra": True})
        return {"content": [{"type": "text", "text": text}], "structuredContent": structured}

    def strict_call(self, name: str, args: Any) -> dict[str, Any]:
        """forecast: the schema's rules (formats asserted), then what the schema cannot say."""
        if name == "archive":
            return {"content": [{"type": "text", "text": "the archive is offline"}], "isError": True}
        checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
        errors = list(jsonschema.Draft202012Validator(STRICT_TOOL["inputSchema"], format_checker=checker)
                      .iter_errors(args))  # fmt: skip
        problem = errors[0].message if errors else ""
        if not problem and args["zone"] not in KNOWN_ZONES:
            problem = f"unknown zone {args['zone']!r}"
        if not problem and not re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", args["at"]):
            problem = f"at {args['at']!r} is not HH:MM"
        if problem:
            return {"content": [{"type": "text", "text": f"Invalid arguments: {problem}"}], "isError": True}
        structured: dict[str, Any] = {"station": args["station"], "high": 21.5}
        if self.defect == "strict-args-violation":
            structured["high"] = "warm"
        return {
            "content": [{"type": "text", "text": json.dumps(structured)}],
            "structuredContent": structured,
        }

    @staticmethod
    def invalid(schema: dict[str, Any], args: Any) -> str:
        if not isinstance(args, dict):
            return "arguments must be an object"
        for name in schema.get("required", []):
            if name not in args:
                return f"missing {name}"
        for name, value in args.items():
            prop = schema["properties"].get(name)
            if prop is None:
                return f"unexpected {name}"
            kind = prop["type"]
            ok = (
                isinstance(value, str)
                if kind == "string"
                else (isinstance(value, int) and not isinstance(value, bool))
            )
            if not ok:
                return f"{name} must be a {kind}"
        return ""


def _is_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def serve_stdio(server: Server) -> None:
    out = sys.stdout.buffer
    if server.defect == "stdout-garbage":
        out.write(b"raw-reference starting up...\n")
        out.flush()
    if server.defect == "stdout-binary":
        out.write(b"\xff\xfe boot \x1b[31mred\x1b[0m caf\xc3\xa9\n")
        out.flush()
    held: list[bytes] = []  # "late-parse-error": parse errors wait for the next answer
    stuck: list[bytes] = []  # the deaf defects: what was read since the line that made it deaf
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        if server.defect == "stdout-on-call" and b'"tools/call"' in line and b'"echo"' in line:
            out.write(b"echo: called\n")
            out.flush()
        if server.defect == "log-on-malformed" and not _is_json(line):
            log = {"level": "error", "logger": "raw", "data": f"parse error: {line[:40]!r}"}
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": log}
            out.write(json.dumps(note).encode() + b"\n")
        whole = deaf_read(server.defect, line.rstrip(b"\r\n"), stuck)
        if whole is None:
            continue
        response = server.handle_line(whole)
        if response is not None:
            data = json.dumps(response, separators=(",", ":")).encode() + b"\n"
            if server.defect == "late-parse-error" and response.get("error", {}).get("code") == -32700:
                held.append(data)
                continue
            out.write(data + b"".join(held))
            held.clear()
            out.flush()


def deaf_read(defect: str, line: bytes, stuck: list[bytes]) -> bytes | None:
    """The message to handle for `line`, or None when it is swallowed unanswered (the deaf defects).

    "deaf-after-malformed" reads JSON across lines: a line that is no complete JSON value is kept and
    every later line joined to it until the whole parses, which after a truncated object it never
    does. "deaf-after-invalid" answers nothing once a line was not a valid request."""
    if defect not in ("deaf-after-malformed", "deaf-after-invalid"):
        return line
    stuck.append(line)
    if defect == "deaf-after-invalid":
        if len(stuck) > 1 or not _valid_request(line):
            return None
        stuck.clear()
        return line
    joined = b"\n".join(stuck)
    try:
        json.loads(joined)
    except ValueError:
        return None
    stuck.clear()
    return joined


def _valid_request(line: bytes) -> bool:
    try:
        message = json.loads(line)
    except ValueError:
        return False
    return isinstance(message, dict) and isinstance(message.get("method"), str)


STATUS = {-32700: 400, -32600: 400, -32602: 400, -32020: 400, -32021: 400, -32022: 400, -32601: 404}


def serve_http(server: Server) -> None:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def reply(self, status: int, body: bytes = b"", ctype: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            if status == 405:
                self.send_header("Allow", "POST")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if server.defect == "get-silent":
                self.rfile.read()  # until the client closes the connection: no status line is sent
                return
            if server.defect == "get-200":
                self.reply(200, b"ok", "text/plain")
            else:
                self.reply(405)

        def do_DELETE(self) -> None:
            self.reply(405)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            origin = self.headers.get("Origin")
            if origin is not None and origin.split(":")[1:2] != ["//127.0.0.1"]:
                self.reply(403, b"forbidden origin\n", "text/plain")  # DNS-rebinding protection
                return
            try:
                message = json.loads(body)
            except ValueError:
                if server.defect == "malformed-202":
                    self.reply(202)
                    return
                self.reply(
                    400,
                    json.dumps(
                        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
                    ).encode(),
                )
                return
            mismatch = self.mismatch(message)
            if mismatch:
                # mismatch-legacy-code: refused with 400, but routed by the header to the legacy era,
                # as a dual-era server that reads the header first does ("Missing session ID").
                code = -32600 if server.defect == "mismatch-legacy-code" else -32020
                error = {"code": code, "message": mismatch}
                self.reply(
                    400, json.dumps({"jsonrpc": "2.0", "id": message.get("id"), "error": error}).encode()
                )
                return
            with lock:
                response = server.handle(message)
            if response is None:
                self.reply(202)
                return
            status = STATUS.get(response.get("error", {}).get("code"), 200) if "error" in response else 200
            if server.defect == "unknown-method-text" and status == 404:
                self.reply(400, b"method not found\n", "text/plain; charset=utf-8")
                return
            self.reply(status, json.dumps(response).encode())

        def mismatch(self, message: Any) -> str:
            if not isinstance(message, dict) or not isinstance(message.get("method"), str):
                return ""  # an invalid envelope is answered -32600 by handle()
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            if self.header("MCP-Protocol-Version") != meta.get(META_VERSION):
                return "MCP-Protocol-Version header does not match _meta"
            if self.header("Mcp-Method") != message.get("method"):
                return "Mcp-Method header does not match the method"
            key = {"tools/call": "name", "resources/read": "uri"}.get(message.get("method", ""))
            if key and self.header("Mcp-Name") != params.get(key):
                return "Mcp-Name header does not match"
            return ""

        def header(self, name: str) -> str | None:
            """A request header by name, without regard to case (with it, for the defect)."""
            if server.defect == "header-name-case-sensitive":
                return next((v for k, v in self.headers.items() if k == name), None)
            return self.headers.get(name)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = httpd.server_address[1]
    print(f"LISTENING http://127.0.0.1:{port}/mcp", flush=True)
    httpd.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--defect", default="none", choices=sorted(DEFECTS))
    args = parser.parse_args()
    server = Server(args.defect)
    with contextlib.suppress(KeyboardInterrupt):
        serve_http(server) if args.http else serve_stdio(server)


if __name__ == "__main__":
    main()
