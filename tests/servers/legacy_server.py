"""A raw JSON-lines server that speaks exactly one old revision (2025-03-26 or 2024-11-05), over stdio.

It answers `initialize` with its one revision whatever it is asked, as the lifecycle requires of a
server that supports nothing else ("Otherwise, the server MUST respond with another protocol version
it supports"), and refuses `server/discover` with -32601, as a server of the handshake era does. It
has what its revision has and no more: no outputSchema, structuredContent or title (2025-06-18), and
in 2024-11-05 no tool annotations either. In 2025-03-26 it receives JSON-RPC batches ("MUST support
receiving JSON-RPC batches", 2025-03-26 basic/index). Like mcp-go and other servers that stopped at
2025-03-26, the harness must judge it in its revision and not fail it for negotiating correctly.

    python -m tests.servers.legacy_server --speaks 2025-03-26 [--defect NAME]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
from typing import Any

from tests.servers.raw_server import MCP_NAMESPACES, TOOLS, RpcError, Server

#: 2025-06-18 and 2025-11-25 only to contrast a rule an older revision does not have, or has at another
#: level (`draft7-tuple`, `list-changed-undeclared`, `undeclared-sampling`).
SPEAKS = ("2025-03-26", "2024-11-05", "2025-06-18", "2025-11-25")

DEFECTS = {
    "none": "conformant in its revision",
    "echo-unknown": "answers an initialize that asks for an unknown version with that same version",
    "offers-unknown": "answers every initialize with 2031-01-01, a revision the harness does not know",
    "offers-number": "answers every initialize with protocolVersion 20250326, a number",
    "later-members": "conformant: also sends 2025-06-18 members (outputSchema, a structuredContent that"
    " breaks it, title 7, annotations 'ro' in 2024-11-05), which its revision does not define",
    "bad-annotations": "lists a tool whose annotations are a string (2025-03-26 defines them as an object)",
    "batch-notify": "writes a batch of two log notifications to stdout after initialized",
    "draft7-tuple": "lists a tool whose inputSchema (no $schema) uses draft-07 tuple `items`, which"
    " 2020-12 forbids: fine before 2025-11-25 made 2020-12 the default dialect",
    "silent-discover": "never answers server/discover (stops reading), so the 2026-07-28 probe times out",
    "list-changed-undeclared": "sends notifications/tools/list_changed after initialized, though its"
    " tools capability has no listChanged (SHOULD NOT before 2025-06-18, MUST NOT from it)",
    "undeclared-sampling": "asks sampling/createMessage on every tools/call, also of a client that"
    " declared no sampling (SHOULD NOT before 2025-06-18, MUST NOT from it)",
    "unknown-method-32602": "answers a method of no MCP namespace with -32602 (Invalid params), not"
    " -32601, as mcp 1.x does: JSON-RPC's code table, in no MUST sentence",
    "unknown-method-result": "answers a method of no MCP namespace with an empty result, not an error",
    "log-undeclared": "sends notifications/message after initialized without the logging capability (as"
    " FastMCP 2 and mcp 1.x servers do): the logging page's MUST in every revision",
}
_LOG = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "up"}}
#: What a defect writes on stdout right after notifications/initialized: one line, a message or a batch.
AFTER_INITIALIZED: dict[str, Any] = {
    "batch-notify": [_LOG, _LOG],
    "log-undeclared": _LOG,
    "list-changed-undeclared": {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
}
#: The params of the request `undeclared-sampling` sends: valid in every revision (one text block).
SAMPLING = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 8}
DRAFT7_TOOL = {
    "name": "pair",
    "inputSchema": {
        "type": "object",
        "properties": {"pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}},
    },
}


class LegacyServer(Server):
    """raw_server's tools and resources, shaped as one old revision has them."""

    def __init__(self, speaks: str, defect: str) -> None:
        super().__init__("none")
        self.speaks, self.legacy_defect = speaks, defect

    def dispatch(self, method: str, params: dict[str, Any], headers: dict[str, str] | None) -> dict[str, Any]:
        if method == "initialize":
            asked = params.get("protocolVersion")
            offered: Any = self.speaks
            if self.legacy_defect == "echo-unknown" and isinstance(asked, str) and asked < "2024-11-05":
                offered = asked
            elif self.legacy_defect == "offers-unknown":
                offered = "2031-01-01"
            elif self.legacy_defect == "offers-number":
                offered = 20250326
            return {
                "protocolVersion": offered,
                # batch-notify's log notifications are sent with the capability they need (BASE-CAP-003).
                "capabilities": {
                    "tools": {},
                    "resources": {},
                    **({"logging": {}} if self.legacy_defect == "batch-notify" else {}),
                },
                "serverInfo": {"name": "legacy-raw", "version": "1.0.0"},
            }
        if method == "logging/setLevel" and self.legacy_defect == "batch-notify":
            # Declared for its log notifications, so answered as the logging rows require.
            if params.get("level") not in LOG_LEVELS:
                raise RpcError(-32602, "Invalid params: unknown log level")
            return {}
        if method == "server/discover":
            if self.legacy_defect == "silent-discover":
                threading.Event().wait()  # the harness's probe waits its budget out, then kills us
            raise RpcError(-32601, "Method not found")
        # `unknown-method-32602` and `unknown-method-result`: a method of no MCP namespace.
        if self.legacy_defect.startswith("unknown-method-") and method.split("/")[0] not in MCP_NAMESPACES:
            if self.legacy_defect == "unknown-method-result":
                return {}
            raise RpcError(-32602, f"Invalid params: no method {method}")
        result = super().method(method, params, self.speaks)
        if self.speaks >= "2025-06-18":
            if method == "tools/list" and self.legacy_defect == "draft7-tuple" and "nextCursor" not in result:
                result["tools"].append(DRAFT7_TOOL)
            return result
        if method == "tools/list":
            result["tools"] = [self.tool(t) for t in result["tools"]]
            if self.legacy_defect == "draft7-tuple" and "nextCursor" not in result:
                result["tools"].append(DRAFT7_TOOL)
        if method == "tools/call":
            result = self.call_result(result)
        return result

    def tool(self, tool: dict[str, Any]) -> dict[str, Any]:
        shaped = {k: v for k, v in tool.items() if k not in ("outputSchema", "title")}
        if self.speaks == "2024-11-05":
            shaped.pop("annotations", None)
        if self.legacy_defect == "later-members":
            shaped.update(outputSchema=tool["outputSchema"], title=7)
            if self.speaks == "2024-11-05":
                shaped["annotations"] = "ro"
        if self.legacy_defect == "bad-annotations" and tool is TOOLS[0]:
            shaped["annotations"] = "read-only"
        return shaped

    def call_result(self, result: dict[str, Any]) -> dict[str, Any]:
        structured = result.pop("structuredContent", None)
        if self.legacy_defect == "later-members" and structured is not None:
            result["structuredContent"] = {"unexpected": True}
        return result

    def handle_batch(self, batch: list[Any]) -> Any:
        """2025-03-26: a batch gets an array of the answers to its requests (none for notifications)."""
        if self.speaks != "2025-03-26" or not batch:
            return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}
        answers = [self.handle(item) for item in batch]
        return [a for a in answers if a is not None] or None


LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def serve_stdio(server: LegacyServer) -> None:
    out = sys.stdout.buffer
    asked = 0  # `undeclared-sampling`'s requests: each has an id of its own
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if isinstance(message, dict) and "method" not in message and {"result", "error"} & set(message):
            continue  # the client's answer to `undeclared-sampling`'s request: nothing to say back
        if (
            server.legacy_defect == "undeclared-sampling"
            and isinstance(message, dict)
            and message.get("method") == "tools/call"
        ):
            asked += 1
            ask = {"jsonrpc": "2.0", "id": f"sampling-{asked}", "method": "sampling/createMessage"}
            out.write(json.dumps({**ask, "params": SAMPLING}, separators=(",", ":")).encode() + b"\n")
        if isinstance(message, list):
            response: Any = server.handle_batch(message)
        else:
            response = server.handle_line(line.rstrip(b"\r\n"))
        if response is not None:
            out.write(json.dumps(response, separators=(",", ":")).encode() + b"\n")
        after = AFTER_INITIALIZED.get(server.legacy_defect)
        if (
            after is not None
            and isinstance(message, dict)
            and message.get("method") == "notifications/initialized"
        ):
            out.write(json.dumps(after, separators=(",", ":")).encode() + b"\n")
        out.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--speaks", required=True, choices=SPEAKS)
    parser.add_argument("--defect", default="none", choices=sorted(DEFECTS))
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        serve_stdio(LegacyServer(args.speaks, args.defect))


if __name__ == "__main__":
    main()
