"""A hostile MCP server: markup and injection in every string it controls, to prove the views escape.

It is the raw JSON-lines server (tests/servers/raw_server.py) with its names, descriptions, server
identity and error messages replaced by PAYLOAD: an inline `<script>`, an `<img onerror>`, a link and
an image in both HTML and Markdown, table pipes (one behind a backslash), emphasis, code, a heading,
a CDATA end, and control characters XML cannot carry. A report of the base suite against it must
render every view with the same structure as for a harmless server: no element, link, row or cell
added by the server.

    python -m tests.servers.hostile_server
"""

from __future__ import annotations

import contextlib
from typing import Any

from tests.servers.raw_server import TOOLS, RpcError, Server, serve_stdio

PAYLOAD = (
    '<script>window.__pwned = "script"</script><img src=x onerror="window.__pwned=\'img\'">'
    '<a href="https://evil.invalid/">html link</a> **bold** _em_ [md link](https://evil.invalid/) '
    "![md image](https://evil.invalid/t.png) | cell \\| cell `code` "
    "\\*esc\\* \\[esc\\](https://evil.invalid/) "
    "\n# heading\n]]> &amp; \x00\x01\x1b[31m"
)
#: A tool whose name alone is an attack (and breaks the naming rules, so the base suite reports it).
EVIL_TOOL: dict[str, Any] = {
    "name": "<img src=x onerror=alert(1)>|**x**",
    "description": PAYLOAD,
    "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False},
    "annotations": {"readOnlyHint": True, "title": PAYLOAD},
}
SERVER_INFO = {"name": "hostile " + PAYLOAD, "version": PAYLOAD}


class HostileServer(Server):
    def __init__(self) -> None:
        super().__init__("none")

    def dispatch(self, method: str, params: dict[str, Any], headers: dict[str, str] | None) -> dict[str, Any]:
        result = super().dispatch(method, params, headers)
        meta = result.get("_meta") if isinstance(result, dict) else None
        if isinstance(meta, dict) and "io.modelcontextprotocol/serverInfo" in meta:
            meta["io.modelcontextprotocol/serverInfo"] = dict(SERVER_INFO)  # every 2026-07-28 result names it
        if method == "initialize":
            result["serverInfo"] = dict(SERVER_INFO)
            result["instructions"] = PAYLOAD
        return result

    def method(self, method: str, params: dict[str, Any], revision: str) -> dict[str, Any]:
        if method == "tools/list":
            tools = [{**TOOLS[0], "description": PAYLOAD}, TOOLS[1], EVIL_TOOL]
            return {"tools": tools}
        if method == "tools/call" and params.get("name") == EVIL_TOOL["name"]:
            return {"content": [{"type": "text", "text": PAYLOAD}], "isError": True}
        try:
            result = super().method(method, params, revision)
        except RpcError as exc:
            # A leaked trace too, so the hygiene check misses (FAIL under --strict) with the payload in
            # its evidence.
            trace = (
                '\nTraceback (most recent call last):\n  File "/srv/<b>app</b>.py", line 1'
                if exc.code == -32601
                else ""
            )
            raise RpcError(exc.code, f"{exc.message}: {PAYLOAD}{trace}", {"detail": PAYLOAD}) from None
        if method == "server/discover":
            result["_meta"]["io.modelcontextprotocol/serverInfo"] = dict(SERVER_INFO)
        return result


def main() -> None:
    with contextlib.suppress(KeyboardInterrupt):
        serve_stdio(HostileServer())


if __name__ == "__main__":
    main()
