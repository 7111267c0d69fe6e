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
import base64
import itertools
import json
import os
import shlex
import sys
from typing import Any

import httpx

from conformance_reference.client_plus import PREFIX, PlusBehaviour
from conformance_reference.client_wire import HttpWire, LegacySseWire, SessionExpired, StdioWire, Wire

LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
#: RFC 9110 token characters: what an x-mcp-header name may be made of (SEP-2243).
TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
PRIMITIVES = ("string", "number", "integer", "boolean")
META = "io.modelcontextprotocol/"
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
#: The harness's own scenarios behind MCP's authorization (the official ones are named `auth/...`).
OAUTH_EXTRAS = ("x-wif-jwt-bearer-refused",)


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message", "error"))
        self.error = error


class ReferenceClient(PlusBehaviour):
    """One scenario acted out against one server (`act`), over the wire the address names."""

    name = "mcp-conformance-reference-client"

    def __init__(
        self, address: str, scenario: str, revision: str, context: dict[str, Any] | None = None
    ) -> None:
        self.address = address
        self.scenario = scenario
        self.context = context or {}
        #: tool name -> its definition, from tools/list (the x-mcp-header annotations the calls mirror).
        self.tools: dict[str, dict[str, Any]] = {}
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
        if self.scenario.startswith("auth/") or self.scenario in OAUTH_EXTRAS:
            wire.http.auth = self.oauth(address)
        return wire

    def oauth(self, url: str) -> httpx.Auth:
        """MCP's authorization for the OAuth scenarios (client_auth.py)."""
        from conformance_reference.client_auth import OAuthFlow

        return OAuthFlow(url, self.revision)

    # -- what goes on the wire: each a method, so a mutant can change one thing --------------------

    def capabilities(self) -> dict[str, Any]:
        return self.plus_capabilities() or {"elicitation": {}}

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
            if message.get("method") == "tools/call":
                headers.update(self.param_headers(message["params"]))
        return headers

    def param_headers(self, params: dict[str, Any]) -> dict[str, str]:
        """`Mcp-Param-{Name}` for each x-mcp-header parameter the call gives a value (SEP-2243)."""
        schema = self.tools.get(params.get("name", ""), {}).get("inputSchema", {})
        arguments = params.get("arguments")
        out: dict[str, str] = {}
        for name, spec in schema.get("properties", {}).items():
            value = arguments.get(name) if isinstance(arguments, dict) else None
            if "x-mcp-header" in spec and value is not None:
                out[f"Mcp-Param-{spec['x-mcp-header']}"] = self.header_value(value)
        return out

    def header_value(self, value: Any) -> str:
        """A parameter's value as header text: booleans and numbers as JSON text, a string as it is
        when a header can carry it, else Base64-encoded."""
        if isinstance(value, bool):
            return "true" if value else "false"
        text = str(value)
        if all(0x20 <= ord(c) <= 0x7E for c in text) and text == text.strip():
            return text
        return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="

    def usable(self, tool: dict[str, Any]) -> bool:
        """Whether a tool's x-mcp-header annotations are valid: non-empty tokens, unique whatever
        their case, on primitive parameters only (SEP-2243); a tool that breaks one is excluded."""
        seen: set[str] = set()
        for spec in tool.get("inputSchema", {}).get("properties", {}).values():
            header = spec.get("x-mcp-header") if isinstance(spec, dict) else None
            if header is None:
                continue
            if not isinstance(header, str) or not header or set(header) - TOKEN or header.lower() in seen:
                return False
            if spec.get("type") not in PRIMITIVES:
                return False
            seen.add(header.lower())
        return True

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
        result = self.plus_answer(message)
        if result is not None:
            return {"jsonrpc": "2.0", "id": message["id"], "result": result}
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

    def input_response(self, request: dict[str, Any]) -> dict[str, Any]:
        """The result for one input request of an `input_required` result (SEP-2322)."""
        answer = self.answer_server({"id": 0, **request})
        return dict(answer.get("result", {}))

    def retry_params(self, params: dict[str, Any], asked: dict[str, Any]) -> dict[str, Any]:
        """A multi-round request's retry: the same params, the input asked for, the state echoed."""
        responses = {key: self.input_response(req) for key, req in asked.get("inputRequests", {}).items()}
        retry = {**params, "inputResponses": responses}
        if "requestState" in asked:
            retry["requestState"] = asked["requestState"]
        return retry

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        result = await self._request(method, params)
        for _ in range(4):  # the rounds of a multi-round request, bounded
            if not (
                self.modern and isinstance(result, dict) and result.get("resultType") == "input_required"
            ):
                break
            params = self.retry_params(dict(params or {}), result)
            result = await self._request(method, params)
        return result

    async def _request(self, method: str, params: dict[str, Any] | None) -> Any:
        try:
            answer = await self.wire.request(self.message(method, params, True))
        except SessionExpired:
            await self.restart_session()
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
            await self.handshake()

    async def handshake(self) -> None:
        """initialize, its result's version kept, then notifications/initialized."""
        result = await self.request("initialize", self.initialize_params())
        self.wire.negotiated(result.get("protocolVersion", self.revision))
        await self.initialized()

    async def act(self) -> None:
        """The scenario: the harness's own (`x-...`) by `plus_act`, the official ones by `base_act`."""
        if self.scenario.startswith(PREFIX):
            await self.plus_act()
        else:
            await self.base_act()

    async def base_act(self) -> None:
        """The scenario, as the official suite's everything-client acts it: list the tools (keeping
        the valid ones), then the scenario's own act, else call every tool."""
        tools = (await self.request("tools/list")).get("tools", [])
        self.tools = {tool["name"]: tool for tool in tools if self.usable(tool)}
        acts = {
            "tools_call": self.add_numbers,
            "http-custom-headers": self.context_calls,
            "http-standard-headers": self.every_kind,
            "json-schema-2020-12-preservation": self.echo_schema,
        }
        await acts.get(self.scenario, self.every_tool)()

    async def add_numbers(self) -> None:
        if "add_numbers" in self.tools:
            await self.request("tools/call", {"name": "add_numbers", "arguments": self.call_arguments()})

    async def context_calls(self) -> None:
        """The calls MCP_CONFORMANCE_CONTEXT lists (`toolCalls`), with their arguments."""
        for call in self.context.get("toolCalls", []):
            await self.request("tools/call", {"name": call["name"], "arguments": call.get("arguments", {})})

    async def every_tool(self) -> None:
        for name, tool in self.tools.items():
            required = tool.get("inputSchema", {}).get("required", [])
            await self.request("tools/call", {"name": name, "arguments": {key: "value" for key in required}})

    async def every_kind(self) -> None:
        """Every tool, resource and prompt: each request that names one."""
        await self.every_tool()
        for resource in (await self.request("resources/list")).get("resources", []):
            await self.request("resources/read", {"uri": resource["uri"]})
        for prompt in (await self.request("prompts/list")).get("prompts", []):
            await self.request("prompts/get", {"name": prompt["name"]})

    def held_schema(self, name: str) -> dict[str, Any]:
        """The inputSchema this client holds for tool `name` (as listed: nothing stripped)."""
        return dict(self.tools.get(name, {}).get("inputSchema", {}))

    async def echo_schema(self) -> None:
        schema = self.held_schema("json_schema_2020_12_tool")
        await self.request("tools/call", {"name": "json_schema_echo", "arguments": {"schema": schema}})


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
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    return asyncio.run(main_async(factory(argv[-1], scenario, revision, context)))


if __name__ == "__main__":
    sys.exit(main())
