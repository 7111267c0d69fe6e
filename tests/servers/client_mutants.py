"""Mutants of the reference client: each a copy of it with one planted defect, which fails exactly the
row it names (tests/packs/client/). `python -m tests.servers.client_mutants DEFECT URL`, by the
official client contract like the reference."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import httpx

from conformance_reference.client import META, ReferenceClient, main
from conformance_reference.client_wire import HttpWire, Wire


class ExitsOne(ReferenceClient):
    """CLIENT-RUN-001: acts the scenario out, then exits 1."""

    async def act(self) -> None:
        await super().act()
        raise OSError("planted: exit 1")


class Hangs(ReferenceClient):
    """CLIENT-RUN-001: acts the scenario out, then never exits (the harness kills its group)."""

    async def act(self) -> None:
        await super().act()
        await asyncio.sleep(3600)


class NoClientVersion(ReferenceClient):
    """CLIENT-LIFE-001: clientInfo without its version."""

    def client_info(self) -> dict[str, Any]:
        return {"name": self.name}

    def meta(self) -> dict[str, Any]:
        return {**super().meta(), META + "clientInfo": {"name": self.name, "version": "1"}}


class UnknownVersion(ReferenceClient):
    """CLIENT-LIFE-002: offers a protocol version that is no MCP revision."""

    def initialize_params(self) -> dict[str, Any]:
        return {**super().initialize_params(), "protocolVersion": "draft"}


class LegacyOnly(ReferenceClient):
    """CLIENT-RUN-001: speaks only the revisions before 2026-07-28, as released SDK clients of the 1.x
    lines do: at a 2026-07-28 scenario it opens with initialize, which is refused, and exits 1. The
    2026-07-28 rows about its requests are SKIP blocked by the contract case, not a FAIL each."""

    def __init__(
        self, address: str, scenario: str, revision: str, context: dict[str, Any] | None = None
    ) -> None:
        super().__init__(address, scenario, revision, context)
        self.modern = False

    def initialize_params(self) -> dict[str, Any]:
        return {**super().initialize_params(), "protocolVersion": "2025-11-25"}


class KeepsOffer(ReferenceClient):
    """CLIENT-LIFE-004: offers its latest revision (2025-11-25) and keeps naming it in
    MCP-Protocol-Version whatever the server answered. A scenario server that echoed the offer instead
    of answering the revision it plays let this pass at 2025-06-18."""

    def initialize_params(self) -> dict[str, Any]:
        return {**super().initialize_params(), "protocolVersion": "2025-11-25"}

    async def handshake(self) -> None:
        await super().handshake()
        self.wire.negotiated("2025-11-25")


class OffersLatest(ReferenceClient):
    """No defect: offers its latest revision (2025-11-25) and goes on with the version the server
    answers, as the text wants. Every row PASS (or SKIP) at an earlier revision it supports."""

    def initialize_params(self) -> dict[str, Any]:
        return {**super().initialize_params(), "protocolVersion": "2025-11-25"}


class EncodesEmpty(ReferenceClient):
    """No defect: an empty string parameter sent Base64-encoded (=?base64??=), as the TypeScript SDK
    v2 does; the text obliges Base64 for unsafe values and forbids it for none."""

    def header_value(self, value: Any) -> str:
        return "=?base64??=" if value == "" else super().header_value(value)


class RefusesNoResultType(ReferenceClient):
    """No defect: refuses a 2026-07-28 server's result without resultType (that server MUST send it)
    and exits 1, as the TypeScript SDK v2 does; the contract case PASSes with a note."""

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        result = await super().request(method, params)
        if self.modern and isinstance(result, dict) and "resultType" not in result:
            raise OSError(f"planted: the {method} result has no resultType")
        return result


class LatestOnly(ReferenceClient):
    """CLIENT-RUN-001, no defect of the text: supports only 2025-11-25, offers it, and disconnects
    (exits 1) when the server answers another version, as a client SHOULD. One ERROR per scenario
    played at another revision, saying why; every other row PASS or SKIP blocked by it."""

    def initialize_params(self) -> dict[str, Any]:
        return {**super().initialize_params(), "protocolVersion": "2025-11-25"}

    async def handshake(self) -> None:
        result = await self.request("initialize", self.initialize_params())
        if result.get("protocolVersion") != "2025-11-25":
            raise OSError(f"planted: server version {result.get('protocolVersion')} is not supported")
        self.wire.negotiated("2025-11-25")
        await self.initialized()


class NoInitialized(ReferenceClient):
    """CLIENT-LIFE-003: never sends notifications/initialized."""

    async def initialized(self) -> None:
        return None


class NoVersionHeader(ReferenceClient):
    """CLIENT-LIFE-004: no MCP-Protocol-Version header after initialize."""

    async def open(self) -> None:
        await super().open()
        self.wire.negotiated("")  # type: ignore[arg-type]


class NoSessionId(ReferenceClient):
    """CLIENT-LIFE-005: drops the Mcp-Session-Id it was given."""

    def open_wire(self, address: str) -> Wire:
        wire = super().open_wire(address)
        if isinstance(wire, HttpWire):
            given = wire._headers
            wire._headers = lambda message: {  # type: ignore[method-assign]
                k: v for k, v in given(message).items() if k != "Mcp-Session-Id"
            }
        return wire


class ArgumentsList(ReferenceClient):
    """CLIENT-TOOLS-001: tools/call arguments as an array."""

    def call_arguments(self) -> Any:
        return [5, 3]


class NoDefaults(ReferenceClient):
    """CLIENT-ELICIT-001: accepts the form with none of its defaults."""

    def elicit_answer(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {}}


class BadAction(ReferenceClient):
    """CLIENT-ELICIT-002: answers elicitation/create with an action the schema does not have."""

    def elicit_answer(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**super().elicit_answer(params), "action": "ok"}


class ElicitError(ReferenceClient):
    """CLIENT-ELICIT-002 (WARN): answers the form with a JSON-RPC error instead of an ElicitResult."""

    def answer_server(self, message: dict[str, Any]) -> dict[str, Any]:
        if message.get("method") == "elicitation/create":
            failure = {"code": -32603, "message": "the form could not be shown"}
            return {"jsonrpc": "2.0", "id": message["id"], "error": failure}
        return super().answer_server(message)


class NoReconnect(ReferenceClient):
    """CLIENT-SSE-001: never resumes the closed stream (sends the call and goes)."""

    async def act(self) -> None:
        if self.scenario != "sse-retry":
            return await super().act()
        await self.request("tools/list")
        await self.wire.send(self.message("tools/call", {"name": "test_reconnection", "arguments": {}}, True))


class EarlyRetry(ReferenceClient):
    """CLIENT-SSE-002: reconnects at once, ignoring the retry field."""

    def retry_wait(self, retry_ms: int) -> float:
        return 0.0


class NoLastEventId(ReferenceClient):
    """CLIENT-SSE-003: reconnects without Last-Event-ID."""

    def resume_headers(self, last_event_id: str | None) -> dict[str, str]:
        return {}


class NoVersionHeaderModern(ReferenceClient):
    """CLIENT-META-001: 2026-07-28 POSTs without MCP-Protocol-Version."""

    def headers_for(self, message: dict[str, Any]) -> dict[str, str]:
        headers = super().headers_for(message)
        headers.pop("MCP-Protocol-Version", None)
        return headers


class NoCapabilitiesMeta(ReferenceClient):
    """CLIENT-META-002: _meta without the client's capabilities."""

    def meta(self) -> dict[str, Any]:
        meta = super().meta()
        del meta[META + "clientCapabilities"]
        return meta


class NoClientInfoMeta(ReferenceClient):
    """CLIENT-META-003: _meta without clientInfo."""

    def meta(self) -> dict[str, Any]:
        meta = super().meta()
        del meta[META + "clientInfo"]
        return meta


class MismatchedHeader(ReferenceClient):
    """CLIENT-META-004: MCP-Protocol-Version says another version than _meta."""

    def headers_for(self, message: dict[str, Any]) -> dict[str, str]:
        headers = super().headers_for(message)
        if self.modern:
            headers["MCP-Protocol-Version"] = "2025-11-25"
        return headers


class WrongRetry(ReferenceClient):
    """CLIENT-META-005: retries a refused version with one the server did not name."""

    def retry_version(self, supported: list[str]) -> str:
        return "2025-11-25"


class NoRetry(ReferenceClient):
    """CLIENT-META-005: surfaces the refused version as an error and exits 1 without retrying (as mcp
    2.x and FastMCP do when the supported list names the version they asked for)."""

    def retry_version(self, supported: list[str]) -> str:
        raise OSError("planted: the version was refused")


class NoMethodHeader(ReferenceClient):
    """CLIENT-HDR-001: no Mcp-Method header."""

    def headers_for(self, message: dict[str, Any]) -> dict[str, str]:
        headers = super().headers_for(message)
        headers.pop("Mcp-Method", None)
        return headers


class NoNameHeader(ReferenceClient):
    """CLIENT-HDR-002: no Mcp-Name header."""

    def headers_for(self, message: dict[str, Any]) -> dict[str, str]:
        headers = super().headers_for(message)
        headers.pop("Mcp-Name", None)
        return headers


class AlteredState(ReferenceClient):
    """CLIENT-MRTR-001: echoes requestState with a byte changed."""

    def retry_params(self, params: dict[str, Any], asked: dict[str, Any]) -> dict[str, Any]:
        retry = super().retry_params(params, asked)
        if "requestState" in retry:
            retry["requestState"] += "x"
        return retry


class SameId(ReferenceClient):
    """CLIENT-MRTR-002: retries with the first request's id."""

    reuse = False

    def retry_params(self, params: dict[str, Any], asked: dict[str, Any]) -> dict[str, Any]:
        self.reuse = True
        return super().retry_params(params, asked)

    def message(self, method: str, params: dict[str, Any] | None, request: bool) -> dict[str, Any]:
        out = super().message(method, params, request)
        if self.reuse and request:
            out["id"], self.reuse = out["id"] - 1, False
        return out


class InventedState(ReferenceClient):
    """CLIENT-MRTR-003: sends a requestState of its own when none was given."""

    def retry_params(self, params: dict[str, Any], asked: dict[str, Any]) -> dict[str, Any]:
        return {"requestState": "invented", **super().retry_params(params, asked)}


class LeakyState(ReferenceClient):
    """CLIENT-MRTR-004: carries the last retry's inputResponses into the call of another tool (the
    scenario's unrelated one, so no other row's call is touched)."""

    leak: dict[str, Any] = {}

    def retry_params(self, params: dict[str, Any], asked: dict[str, Any]) -> dict[str, Any]:
        retry = super().retry_params(params, asked)
        self.leak = {"inputResponses": retry["inputResponses"]}
        return retry

    def message(self, method: str, params: dict[str, Any] | None, request: bool) -> dict[str, Any]:
        params = dict(params or {})
        if method == "tools/call" and self.leak and params.get("name") == "test_mrtr_unrelated":
            params, self.leak = {**params, **self.leak}, {}
        return super().message(method, params or None, request)


class RetryNoResultType(ReferenceClient):
    """CLIENT-MRTR-005: takes a result without resultType for one that asks for input."""

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        result = await super().request(method, params)
        if self.modern and method == "tools/call" and isinstance(result, dict) and "resultType" not in result:
            result = await super().request(method, {**(params or {}), "inputResponses": {}})
        return result


class NoParamHeaders(ReferenceClient):
    """CLIENT-HDR-003: mirrors no x-mcp-header parameter."""

    def param_headers(self, params: dict[str, Any]) -> dict[str, str]:
        return {}


class MirrorsEverything(ReferenceClient):
    """CLIENT-HDR-004: mirrors the unannotated `query` too."""

    def param_headers(self, params: dict[str, Any]) -> dict[str, str]:
        headers = super().param_headers(params)
        if "query" in (params.get("arguments") or {}):
            headers["Mcp-Param-Query"] = self.header_value(params["arguments"]["query"])
        return headers


class BooleanAsNumber(ReferenceClient):
    """CLIENT-HDR-005: a boolean as 1 or 0."""

    def header_value(self, value: Any) -> str:
        return str(int(value)) if isinstance(value, bool) else super().header_value(value)


class BareBase64(ReferenceClient):
    """CLIENT-HDR-006: an unsafe string as bare Base64, without the =?base64?...?= wrapper."""

    def header_value(self, value: Any) -> str:
        return super().header_value(value).removeprefix("=?base64?").removesuffix("?=")


class NullAsText(ReferenceClient):
    """CLIENT-HDR-007: a null parameter sent as the text null."""

    def param_headers(self, params: dict[str, Any]) -> dict[str, str]:
        headers = super().param_headers(params)
        if (params.get("arguments") or {}).get("verbose", 0) is None:
            headers["Mcp-Param-Verbose"] = "null"
        return headers


class KeepsInvalidTools(ReferenceClient):
    """CLIENT-HDR-008: calls every tool, however invalid its x-mcp-header (mirroring none of them)."""

    def usable(self, tool: dict[str, Any]) -> bool:
        return True

    def param_headers(self, params: dict[str, Any]) -> dict[str, str]:
        return super().param_headers(params) if params.get("name") == "valid_tool" else {}


class Dereferences(ReferenceClient):
    """CLIENT-SCHEMA-001: fetches every network $ref of the tools' schemas."""

    async def act(self) -> None:
        tools = (await self.request("tools/list")).get("tools", [])
        refs = [
            spec["$ref"]
            for tool in tools
            for spec in tool.get("inputSchema", {}).get("properties", {}).values()
            if str(spec.get("$ref", "")).startswith("http")
        ]
        async with httpx.AsyncClient() as http:
            for ref in refs:
                await http.get(ref)


class StripsKeywords(ReferenceClient):
    """CLIENT-SCHEMA-002: holds a tool's schema without the keywords it does not use itself."""

    def held_schema(self, name: str) -> dict[str, Any]:
        schema = super().held_schema(name)
        return {k: v for k, v in schema.items() if k not in ("allOf", "if", "then", "else", "$defs")}


#: defect -> (the mutant, the requirement row it must fail and nothing else).
MUTANTS: dict[str, tuple[type[ReferenceClient], str]] = {
    "exits-one": (ExitsOne, "CLIENT-RUN-001"),
    "hangs": (Hangs, "CLIENT-RUN-001"),
    "no-client-version": (NoClientVersion, "CLIENT-LIFE-001"),
    "unknown-version": (UnknownVersion, "CLIENT-LIFE-002"),
    "legacy-only": (LegacyOnly, "CLIENT-RUN-001"),
    "no-initialized": (NoInitialized, "CLIENT-LIFE-003"),
    "no-version-header": (NoVersionHeader, "CLIENT-LIFE-004"),
    "keeps-offer": (KeepsOffer, "CLIENT-LIFE-004"),
    "latest-only": (LatestOnly, "CLIENT-RUN-001"),
    "no-session-id": (NoSessionId, "CLIENT-LIFE-005"),
    "arguments-list": (ArgumentsList, "CLIENT-TOOLS-001"),
    "no-defaults": (NoDefaults, "CLIENT-ELICIT-001"),
    "bad-action": (BadAction, "CLIENT-ELICIT-002"),
    "elicit-error": (ElicitError, "CLIENT-ELICIT-002"),
    "no-reconnect": (NoReconnect, "CLIENT-SSE-001"),
    "early-retry": (EarlyRetry, "CLIENT-SSE-002"),
    "no-last-event-id": (NoLastEventId, "CLIENT-SSE-003"),
    "no-version-header-modern": (NoVersionHeaderModern, "CLIENT-META-001"),
    "no-capabilities-meta": (NoCapabilitiesMeta, "CLIENT-META-002"),
    "no-client-info-meta": (NoClientInfoMeta, "CLIENT-META-003"),
    "mismatched-header": (MismatchedHeader, "CLIENT-META-004"),
    "wrong-retry": (WrongRetry, "CLIENT-META-005"),
    "no-retry": (NoRetry, "CLIENT-META-005"),
    "no-method-header": (NoMethodHeader, "CLIENT-HDR-001"),
    "no-name-header": (NoNameHeader, "CLIENT-HDR-002"),
    "altered-state": (AlteredState, "CLIENT-MRTR-001"),
    "same-id": (SameId, "CLIENT-MRTR-002"),
    "invented-state": (InventedState, "CLIENT-MRTR-003"),
    "leaky-state": (LeakyState, "CLIENT-MRTR-004"),
    "retry-no-result-type": (RetryNoResultType, "CLIENT-MRTR-005"),
    "no-param-headers": (NoParamHeaders, "CLIENT-HDR-003"),
    "mirrors-everything": (MirrorsEverything, "CLIENT-HDR-004"),
    "boolean-as-number": (BooleanAsNumber, "CLIENT-HDR-005"),
    "bare-base64": (BareBase64, "CLIENT-HDR-006"),
    "null-as-text": (NullAsText, "CLIENT-HDR-007"),
    "keeps-invalid-tools": (KeepsInvalidTools, "CLIENT-HDR-008"),
    "dereferences": (Dereferences, "CLIENT-SCHEMA-001"),
    "strips-keywords": (StripsKeywords, "CLIENT-SCHEMA-002"),
}

#: Clients with no defect that behave otherwise than the reference, whose every row must PASS or SKIP.
VARIANTS: dict[str, type[ReferenceClient]] = {
    "offers-latest": OffersLatest,
    "encodes-empty": EncodesEmpty,
    "refuses-no-result-type": RefusesNoResultType,
}


if __name__ == "__main__":
    chosen = VARIANTS.get(sys.argv[1]) or MUTANTS[sys.argv[1]][0]
    sys.exit(main(chosen, sys.argv[2:]))
