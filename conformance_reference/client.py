"""The reference client: an MCP client program written to the official client contract, which the
client pack's scenarios judge (`mcp-conformance client` without `--command` runs it).

Contract: `python -m conformance_reference.client URL` (or `stdio:COMMAND`), with
`MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_PROTOCOL_VERSION` and `MCP_CONFORMANCE_TRANSPORT` in the
environment. It is built on httpx, not on the `mcp` SDK's client: it must speak 2026-07-28's stateless
envelope (per-request `_meta`, the standard headers, the version retry) and resume a closed event
stream after its retry field exactly, which no released SDK client does yet. Every place a mutant
changes (tests/servers/client_mutants.py) is a method of `ReferenceClient`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import shlex
import sys
from typing import Any

import httpx

from conformance_reference.client_wire import HttpWire, LegacySseWire, StdioWire, Wire

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
META = "io.modelcontextprotocol/"
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message", "error"))
        self.error = error


class ReferenceClient:
    """One scenario acted out against one server (`act`), over the wire the address names."""

    name = "mcp-conformance-reference-client"

    def __init__(self, address: str, scenario: str, revision: str) -> None:
        self.address = address
        self.scenario = scenario
        self.revision = revision
        self.modern = revision not in LEGACY
        self.ids = itertools.count(1)
        self.wire: Wire = self.open_wire(address)

    def open_wire(self, address: str) -> Wire:
        if address.startswith("stdio:"):
            return StdioWire(shlex.split(address[len("stdio:") :]), self)
        if os.environ.get("MCP_CONFORMANCE_TRANSPORT") == "sse":
            return LegacySseWire(address, self)
        wire = HttpWire(address, self)
        if self.scenario.startswith("auth/"):
            wire.http.auth = self.oauth(address)
        return wire

    def oauth(self, url: str) -> httpx.Auth:
        """MCP's authorization for the OAuth scenarios (client_auth.py)."""
        from conformance_reference.client_auth import OAuthFlow

        return OAuthFlow(url, self.revision)

    # -- what goes on the wire: each a method, so a mutant can change one thing --------------------

    def capabilities(self) -> dict[str, Any]:
        return {"elicitation": {}}

    def client_info(self) -> dict[str, Any]:
        return {"name": self.name, "version": "1.0.0"}

    def initialize_params(self) -> dict[str, Any]:
        return {
            "protocolVersion": self.revision,
            "capabilities": self.capabilities(),
            "clientInfo": self.client_info(),
        }

    def meta(self) -> dict[str, Any]:
        return {
            META + "protocolVersion": self.revision,
            META + "clientCapabilities": self.capabilities(),
            META + "clientInfo": self.client_info(),
        }

    def headers_for(self, message: dict[str, Any]) -> dict[str, str]:
        """The HTTP headers a message's POST carries beyond the transport's own."""
        headers: dict[str, str] = {}
        if self.modern:
            headers["MCP-Protocol-Version"] = self.revision
            if "method" in message:
                headers["Mcp-Method"] = message["method"]
            named = NAMED.get(message.get("method", ""))
            if named and isinstance(message.get("params", {}).get(named), str):
                headers["Mcp-Name"] = message["params"][named]
        return headers

    def retry_wait(self, retry_ms: int) -> float:
        """Seconds to wait before reconnecting a stream whose retry field said `retry_ms`."""
        return retry_ms / 1000

    def resume_headers(self, last_event_id: str | None) -> dict[str, str]:
        return {"Last-Event-ID": last_event_id} if last_event_id else {}

    def retry_version(self, supported: list[str]) -> str:
        """The version to retry with after an UnsupportedProtocolVersionError naming `supported`."""
        return supported[0]

    def call_arguments(self) -> dict[str, Any]:
        return {"a": 5, "b": 3}

    def elicit_answer(self, params: dict[str, Any]) -> dict[str, Any]:
        """Accept the form with every field's default (SEP-1034)."""
        fields = params.get("requestedSchema", {}).get("properties", {})
        content = {key: spec["default"] for key, spec in fields.items() if "default" in spec}
        return {"action": "accept", "content": content}

    async def initialized(self) -> None:
        await self.notify("notifications/initialized")

    # -- speaking ----------------------------------------------------------------------------------

    def answer_server(self, message: dict[str, Any]) -> dict[str, Any]:
        """The answer to a request the server sent."""
        if message.get("method") == "elicitation/create":
            return {
                "jsonrpc": "2.0",
                "id": message["id"],
                "result": self.elicit_answer(message.get("params", {})),
            }
        if message.get("method") == "ping":
            return {"jsonrpc": "2.0", "id": message["id"], "result": {}}
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "not supported"}}

    def message(self, method: str, params: dict[str, Any] | None, request: bool) -> dict[str, Any]:
        params = dict(params or {})
        if self.modern and request:
            params["_meta"] = {**params.get("_meta", {}), **self.meta()}
        out: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if request:
            out["id"] = next(self.ids)
        if params:
            out["params"] = params
        return out

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        answer = await self.wire.request(self.message(method, params, True))
        if "error" in answer and answer["error"].get("code") == -32022 and self.modern:
            supported = answer["error"].get("data", {}).get("supported") or []
            if supported:
                self.revision = self.retry_version(supported)
                answer = await self.wire.request(self.message(method, params, True))
        if "error" in answer:
            raise RpcError(answer["error"])
        return answer.get("result")

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await self.wire.send(self.message(method, params, False))

    async def open(self) -> None:
        await self.wire.start()
        if not self.modern:
            result = await self.request("initialize", self.initialize_params())
            self.wire.negotiated(result.get("protocolVersion", self.revision))
            await self.initialized()

    async def act(self) -> None:
        """The scenario, as the official suite's everything-client acts it."""
        tools = (await self.request("tools/list")).get("tools", [])
        names = [tool["name"] for tool in tools]
        if self.scenario == "tools_call" and "add_numbers" in names:
            await self.request("tools/call", {"name": "add_numbers", "arguments": self.call_arguments()})
        for name in names:
            if self.scenario != "tools_call":
                await self.request("tools/call", {"name": name, "arguments": {}})
        if self.scenario == "http-standard-headers":
            for resource in (await self.request("resources/list")).get("resources", []):
                await self.request("resources/read", {"uri": resource["uri"]})
            for prompt in (await self.request("prompts/list")).get("prompts", []):
                await self.request("prompts/get", {"name": prompt["name"]})


async def main_async(client: ReferenceClient) -> int:
    try:
        await client.open()
        await client.act()
    except (RpcError, httpx.HTTPError, OSError, TimeoutError) as exc:
        print(f"reference client: {client.scenario}: {exc!r}", file=sys.stderr)
        return 1
    finally:
        await client.wire.close()
    return 0


def main(factory: type[ReferenceClient] = ReferenceClient, argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print("usage: python -m conformance_reference.client URL|stdio:COMMAND", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    revision = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")
    context = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    if context:
        json.loads(context)  # a context the contract gives must be JSON; this client needs none of it
    return asyncio.run(main_async(factory(argv[-1], scenario, revision)))


if __name__ == "__main__":
    sys.exit(main())
