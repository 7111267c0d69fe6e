"""A deliberately plain MCP server for scale runs: raw JSON lines over stdio, N tools, big results.

Why not the SDK: its import alone costs about half a second per process and its per-request
dispatch dominates a small call, so a scale figure taken against it would measure the SDK. This
server answers from prebuilt data with the standard library, so the harness's own growth shows.

It speaks the initialize handshake (2025-06-18 and 2025-11-25; the benchmark pins 2025-11-25) and
passes the base suite: JSON-RPC errors (-32700, -32600, -32601, -32602), ping, paginated
`tools/list` (`--page-size`, default 100, 0 for one page), `tools/call` with structuredContent
and its JSON text mirror. Every tool is annotated `readOnlyHint: true`, so the harness's default
`--call-tools safe` calls each of them once. With `--result-bytes N`, the first tool's result
carries about N bytes (half in structuredContent, half in its JSON text mirror).

Schemas are distinct per tool by default (a tool-specific description in each), as on a server
generated from a large API: a harness that validated each distinct schema once would not be
flattered by N copies of one schema. `--schemas same` gives every tool the same two schemas.

    python bench/scale_server.py --tools 5000 [--page-size 100] [--result-bytes 10485760] [--schemas same]
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from typing import Any

VERSIONS = ("2025-11-25", "2025-06-18")
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


def _text_schema(what: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"text": {"type": "string", "description": what}},
        "required": ["text"],
        "additionalProperties": False,
    }


def build_tools(count: int, distinct: bool = True) -> list[dict[str, Any]]:
    """N tools with closed input and output schemas, in a fixed order."""
    width = max(5, len(str(count)))
    return [
        {
            "name": f"tool_{i:0{width}d}",
            "description": f"Scale tool number {i}: returns its text argument.",
            "inputSchema": _text_schema(f"the text tool {i} returns" if distinct else "the text to return"),
            "outputSchema": _text_schema(f"what tool {i} returned" if distinct else "the text returned"),
            "annotations": {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False},
        }
        for i in range(count)
    ]


class ScaleServer:
    def __init__(self, tools: int, page_size: int, result_bytes: int, distinct: bool = True) -> None:
        self.tools = build_tools(tools, distinct)
        self.by_name = {t["name"]: t for t in self.tools}
        self.page_size = page_size or max(1, len(self.tools))
        self.big_tool = self.tools[0]["name"] if self.tools and result_bytes else ""
        self.big_text = "x" * max(0, result_bytes // 2 - 64)
        self.version = VERSIONS[0]

    def handle(self, line: bytes) -> dict[str, Any] | None:
        try:
            message = json.loads(line)
        except ValueError:
            return _error(None, PARSE_ERROR, "Parse error")
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return _error(_id_of(message), INVALID_REQUEST, "Invalid Request")
        method = message.get("method")
        if not isinstance(method, str):
            return _error(_id_of(message), INVALID_REQUEST, "Invalid Request")
        if "id" not in message:
            return None  # a notification: nothing to answer
        msg_id = message["id"]
        if not isinstance(msg_id, str | int) or isinstance(msg_id, bool):
            return _error(None, INVALID_REQUEST, "Invalid Request")
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            return _error(msg_id, INVALID_PARAMS, "params must be an object")
        params = params or {}
        if method == "initialize":
            asked = params.get("protocolVersion")
            self.version = asked if asked in VERSIONS else VERSIONS[0]
            return _result(
                msg_id,
                {
                    "protocolVersion": self.version,
                    "capabilities": {"tools": {"listChanged": False}},
                    "serverInfo": {"name": "bench-scale-server", "version": "0.1.0"},
                },
            )
        if method == "ping":
            return _result(msg_id, {})
        if method == "tools/list":
            return self.list_tools(msg_id, params.get("cursor"))
        if method == "tools/call":
            return self.call_tool(msg_id, params)
        return _error(msg_id, METHOD_NOT_FOUND, "Method not found")

    def list_tools(self, msg_id: Any, cursor: Any) -> dict[str, Any]:
        start = 0
        if cursor is not None:
            try:
                start = int(base64.urlsafe_b64decode(str(cursor).encode()).decode().removeprefix("at:"))
            except ValueError:
                return _error(msg_id, INVALID_PARAMS, "Invalid cursor")
            if not 0 < start < len(self.tools):
                return _error(msg_id, INVALID_PARAMS, "Invalid cursor")
        end = start + self.page_size
        result: dict[str, Any] = {"tools": self.tools[start:end]}
        if end < len(self.tools):
            result["nextCursor"] = base64.urlsafe_b64encode(f"at:{end}".encode()).decode()
        return _result(msg_id, result)

    def call_tool(self, msg_id: Any, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str) or name not in self.by_name:
            return _error(msg_id, INVALID_PARAMS, "Unknown tool")
        args = params.get("arguments") or {}
        if not isinstance(args, dict) or not isinstance(args.get("text"), str) or set(args) != {"text"}:
            text = f"Invalid arguments for tool {name!r}: exactly one string argument 'text' is required"
            if self.version == "2025-06-18":
                return _error(msg_id, INVALID_PARAMS, text)
            return _result(msg_id, {"content": [{"type": "text", "text": text}], "isError": True})
        out = {"text": self.big_text if name == self.big_tool else args["text"]}
        mirror = json.dumps(out, separators=(",", ":"))
        return _result(
            msg_id,
            {"content": [{"type": "text", "text": mirror}], "structuredContent": out, "isError": False},
        )


def _id_of(message: Any) -> Any:
    if isinstance(message, dict) and isinstance(message.get("id"), str | int):
        return message["id"]
    return None


def _result(msg_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=10)
    parser.add_argument("--page-size", type=int, default=100, help="tools per tools/list page; 0: one page")
    parser.add_argument("--result-bytes", type=int, default=0, help="size of the first tool's result")
    parser.add_argument("--schemas", choices=("distinct", "same"), default="distinct")
    args = parser.parse_args(argv)
    server = ScaleServer(args.tools, args.page_size, args.result_bytes, args.schemas == "distinct")
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    for line in stdin:  # ends when the client closes stdin
        if not line.strip():
            continue
        answer = server.handle(line)
        if answer is not None:
            stdout.write(json.dumps(answer, separators=(",", ":")).encode() + b"\n")
            stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
