"""Mutants of the raw server for the surface rows: wire shapes, capabilities, ping, notifications, paging.

Each `--defect NAME` plants one fault in `tests.servers.raw_server` (conformant with `none`), over stdio.
A defect may need to send a message no request asked for (a notification), so this module has its own
stdio loop: `Mutant.pending` holds what goes out before the next answer, `Mutant.later` what goes out
after it.

    python -m tests.servers.base_surface_mutants --defect NAME
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from typing import Any

from tests.servers import raw_server
from tests.servers.raw_server import MODERN, RpcError

DEFECTS = {
    "none": "conformant",
    "wire-error-shape": "answers an invalid cursor with -32602 but no error message",
    "wire-notification-shape": "declares logging and, before each tool result, sends notifications/message"
    " with level 'loud' and no data",
    "undeclared-served": "serves a prompt on prompts/list without declaring prompts",
    "undeclared-code": "answers prompts/list, not declared, with -32603 instead of -32601",
    "undeclared-notification": "sends notifications/message before each tool result, logging undeclared",
    "ping-not-empty": 'answers ping with {"status": "ok"}',
    "no-ping": "has no ping method: answers every ping with -32601 (a hand-written Rust server does)",
    "ping-before-initialized": "refuses ping until notifications/initialized has come",
    "exit-on-early-ping": "exits (status 1, a line on stderr) on a ping before notifications/initialized,"
    " as Rust rmcp servers do",
    "answers-notifications": "answers a notification it does not know with a -32601 error (id null)",
    "templates-cursor-loop": "the resources/templates/list cursor points back to its first page forever",
    "invalid-cursor-ignored": "answers resources/list with a cursor it never gave with the first page",
    "retired-code": "answers resources/read of an unknown URI with -32002 in 2026-07-28 too",
    "no-cache-hints": "declares prompts and answers prompts/list in 2026-07-28 without ttlMs and cacheScope",
    "mixed-cache-scope": "2026-07-28 tools/list: the first page private, the others public",
    "per-connection-list": "lists a tool named after its process, so each connection sees another list",
    "declared-unanswered": "declares prompts but answers prompts/list with -32601",
    "no-server-info": "2026-07-28 results carry no io.modelcontextprotocol/serverInfo in _meta",
    "asks-roots-when-idle": "not a defect: to a client that declared roots, sends roots/list right after"
    " answering the first ping after notifications/initialized, while that client waits for nothing",
    "early-ping-answered-late": "not a defect: answers a ping sent before notifications/initialized only"
    " right after its next answer, in the same write (as a server answering concurrently may): the later"
    " ping's answer comes first, the early one's just after it",
    "early-ping-unanswered": "never answers a ping sent before notifications/initialized (the pings after"
    " it are answered)",
}

PROMPT = {"name": "greet", "description": "Greets someone."}
#: Defects whose server declares prompts (and answers prompts/list, but for `declared-unanswered`).
DECLARES_PROMPTS = ("no-cache-hints", "declared-unanswered")


class Mutant(raw_server.Server):
    """The raw server with one surface defect; `pending` holds messages sent before the next answer."""

    def __init__(self, defect: str) -> None:
        super().__init__("none")
        self.surface = defect
        self.pending: list[dict[str, Any]] = []
        self.later: list[dict[str, Any]] = []
        #: Answers held back until the next answer is written, then written right after it.
        self.held: list[dict[str, Any]] = []
        self.initialized = False
        self.declared_roots = False
        self.asked_roots = False

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {"tools": {}, "resources": {}}
        if self.surface == "wire-notification-shape":
            caps["logging"] = {}
        if self.surface in DECLARES_PROMPTS:
            caps["prompts"] = {}
        return caps

    def handle(self, message: Any, headers: dict[str, str] | None = None) -> dict[str, Any] | None:
        if isinstance(message, dict) and message.get("method") == "notifications/initialized":
            self.initialized = True
        if isinstance(message, dict) and message.get("id") == ROOTS_ID and "method" not in message:
            return None  # the client's answer to our roots/list
        if isinstance(message, dict) and message.get("method") == "initialize":
            capabilities = (message.get("params") or {}).get("capabilities") or {}
            self.declared_roots = isinstance(capabilities.get("roots"), dict)
        notification = (
            isinstance(message, dict) and isinstance(message.get("method"), str) and "id" not in message
        )
        if (
            notification
            and self.surface == "answers-notifications"
            and message["method"] != "notifications/initialized"
        ):
            return {"jsonrpc": "2.0", "id": None, "error": {"code": -32601, "message": "Method not found"}}
        response = super().handle(message, headers)
        early = not self.initialized and isinstance(message, dict) and message.get("method") == "ping"
        if self.surface == "early-ping-answered-late" and early and response is not None:
            self.held.append(response)  # written right after the next answer (`serve`)
            return None
        if (
            self.surface == "no-server-info"
            and response is not None
            and isinstance(response.get("result"), dict)
        ):
            meta = response["result"].get("_meta")
            if isinstance(meta, dict):
                meta.pop("io.modelcontextprotocol/serverInfo", None)
                if not meta:
                    response["result"].pop("_meta")
        return response

    def dispatch(self, method: str, params: dict[str, Any], headers: dict[str, str] | None) -> dict[str, Any]:
        result = super().dispatch(method, params, headers)
        if method in ("initialize", "server/discover"):
            result["capabilities"] = self.capabilities()
        modern = self.modern(params)
        if modern and method == "prompts/list" and self.surface != "no-cache-hints":
            result.update(cacheScope="public", ttlMs=0)
        if modern and method == "tools/list" and self.surface == "mixed-cache-scope":
            result["cacheScope"] = "private" if params.get("cursor") is None else "public"
        return result

    def method(self, method: str, params: dict[str, Any], revision: str) -> dict[str, Any]:
        defect = self.surface
        if method == "ping":
            if defect == "ping-not-empty":
                return {"status": "ok"}
            if defect == "no-ping":
                raise RpcError(-32601, "Method not found")
            if defect == "ping-before-initialized" and not self.initialized:
                raise RpcError(-32600, "Not initialized")
            if defect == "exit-on-early-ping" and not self.initialized:
                sys.stderr.write("Error: expect initialized notification, but received a request\n")
                sys.stderr.flush()
                os._exit(1)
            if defect == "early-ping-unanswered" and not self.initialized:
                raise raw_server.Unanswered()
            asks = self.initialized and self.declared_roots and not self.asked_roots
            if defect == "asks-roots-when-idle" and asks:
                self.asked_roots = True
                self.later.append({"jsonrpc": "2.0", "id": ROOTS_ID, "method": "roots/list"})
        if method == "prompts/list":
            if params.get("cursor") is not None:
                raise RpcError(-32602, "Invalid cursor")  # one page: no cursor was ever given
            if defect in ("undeclared-served", "no-cache-hints"):
                return {"prompts": [PROMPT]}
            if defect == "undeclared-code":
                raise RpcError(-32603, "Internal error")
        if method in ("tools/list", "resources/list") and params.get("cursor") == INVALID:
            if defect == "wire-error-shape":
                raise RpcError(-32602, None)  # type: ignore[arg-type]
            if defect == "invalid-cursor-ignored" and method == "resources/list":
                return {"resources": [raw_server.RESOURCE]}
        if (
            method == "resources/templates/list"
            and defect == "templates-cursor-loop"
            and params.get("cursor") in (None, "again")
        ):
            return {"resourceTemplates": [raw_server.TEMPLATE], "nextCursor": "again"}
        if method == "resources/read" and defect == "retired-code" and revision == MODERN:
            uri = params.get("uri")
            if uri != raw_server.RESOURCE["uri"] and not str(uri).startswith("raw://items/"):
                raise RpcError(-32002, "Resource not found", {"uri": uri})
        if method == "tools/list" and defect == "per-connection-list":
            page = super().method(method, params, revision)
            if params.get("cursor") is None:
                page["tools"].append({"name": f"session_{os.getpid()}", "inputSchema": {"type": "object"}})
            return page
        if method == "tools/call" and defect == "wire-notification-shape":
            self.pending.append(
                {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "loud"}}
            )
        if method == "tools/call" and defect == "undeclared-notification":
            log = {"level": "info", "data": "calling a tool"}
            self.pending.append({"jsonrpc": "2.0", "method": "notifications/message", "params": log})
        return super().method(method, params, revision)


#: The id of the roots/list request `asks-roots-when-idle` sends.
ROOTS_ID = "surface-roots"
#: The cursor the harness sends as one no server ever gave (`conformance_packs.base.pagination`).
INVALID = "conformance-invalid-cursor-7f3a"


def _error_without_message(response: dict[str, Any]) -> dict[str, Any]:
    error = response.get("error")
    if isinstance(error, dict) and error.get("message") is None:
        error.pop("message", None)
    return response


def serve(server: Mutant) -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        response = server.handle_line(line.rstrip(b"\r\n"))
        messages, server.pending = server.pending, []
        if response is not None:
            messages.append(_error_without_message(response))
            messages, server.held = messages + server.held, []
        messages, server.later = messages + server.later, []
        for message in messages:
            out.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        out.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--defect", default="none", choices=sorted(DEFECTS))
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        serve(Mutant(args.defect))


if __name__ == "__main__":
    main()
