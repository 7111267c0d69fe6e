"""Mutants of the reference client for the harness's own client rows (beyond the official suite): each
the reference with one planted defect, which fails exactly the row it names (tests/packs/client/
test_client_plus.py). `python -m tests.servers.client_plus_mutants DEFECT URL`, by the official client
contract like the reference."""

from __future__ import annotations

import asyncio
import itertools
import sys
from typing import Any

from conformance_reference.client import ReferenceClient, main
from conformance_reference.client_wire import HttpWire, StdioWire, Wire


class ReusedIds(ReferenceClient):
    """CLIENT-HYG-001: every request after initialize has the ID 2."""

    async def handshake(self) -> None:
        await super().handshake()
        self.ids = itertools.repeat(2)  # type: ignore[assignment]


class JsonOnlyAccept(ReferenceClient):
    """CLIENT-HYG-002: POSTs accept application/json only."""

    def open_wire(self, address: str) -> Wire:
        wire = super().open_wire(address)
        if isinstance(wire, HttpWire):
            plain = wire._headers
            wire._headers = lambda message: {**plain(message), "Accept": "application/json"}  # type: ignore[method-assign]
        return wire


class StdioNoise(ReferenceClient):
    """CLIENT-HYG-003: writes a log line to the server's stdin before its first message."""

    def open_wire(self, address: str) -> Wire:
        wire = super().open_wire(address)
        if isinstance(wire, StdioWire):
            send, noisy = wire.send, [True]

            async def with_noise(message: dict[str, Any]) -> None:
                if noisy and wire.proc is not None and wire.proc.stdin is not None:
                    noisy.clear()
                    wire.proc.stdin.write(b"client: starting up\n")
                await send(message)

            wire.send = with_noise  # type: ignore[method-assign]
        return wire


class CancelsInitialize(ReferenceClient):
    """CLIENT-HYG-004: once initialized, cancels its (answered) initialize request."""

    async def handshake(self) -> None:
        first = next(self.ids)
        self.ids = itertools.chain([first], self.ids)
        await super().handshake()
        await self.notify("notifications/cancelled", {"requestId": first, "reason": "planted"})


class UndeclaredRootsChange(ReferenceClient):
    """CLIENT-HYG-005: declares roots without listChanged, and sends roots/list_changed all the same."""

    def plus_capabilities(self) -> dict[str, Any] | None:
        declared = super().plus_capabilities()
        return {**declared, "roots": {}} if declared else declared

    def declares_roots_changes(self) -> bool:
        return self.scenario == "x-features"


class PingError(ReferenceClient):
    """CLIENT-PING-001: answers ping with method not found."""

    def answer_server(self, message: dict[str, Any]) -> dict[str, Any]:
        if message.get("method") == "ping":
            return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no ping"}}
        return super().answer_server(message)


class EagerRequest(ReferenceClient):
    """CLIENT-INIT-001: lists the tools while initialize is still unanswered."""

    async def handshake(self) -> None:
        opening = asyncio.create_task(super().handshake())
        await asyncio.sleep(0.01)
        await self.request("tools/list")
        await opening


class EagerInitialized(ReferenceClient):
    """CLIENT-INIT-002: sends notifications/initialized without waiting for the initialize result."""

    async def handshake(self) -> None:
        opening = asyncio.create_task(self.request("initialize", self.initialize_params()))
        await asyncio.sleep(0.01)
        await self.initialized()
        result = await opening
        self.wire.negotiated(result.get("protocolVersion", self.revision))


class KeepsSessionId(ReferenceClient):
    """CLIENT-SESS-001: after HTTP 404 initializes again with a session ID still attached."""

    async def restart_session(self) -> None:
        if isinstance(self.wire, HttpWire):
            self.wire.session = "the-ended-session"
        await super().restart_session()


class GivesUpOn404(ReferenceClient):
    """CLIENT-SESS-001: after HTTP 404 fails the request and exits 1, never initializing anew (as the
    TypeScript and Python SDK clients do); the contract case is no ERROR for it."""

    async def restart_session(self) -> None:
        raise OSError("planted: the session is gone")


class CancelsUnknown(ReferenceClient):
    """CLIENT-CANCEL-001: cancels a request ID it never issued."""

    def cancel_params(self, request_id: Any) -> dict[str, Any]:
        return {"requestId": "never-issued", "reason": "planted"}


class FractionToken(ReferenceClient):
    """CLIENT-PROG-001: asks for progress with the token 1.5."""

    def progress_token(self) -> Any:
        return 1.5


class SamplingNoModel(ReferenceClient):
    """CLIENT-FEAT-001: a sampling result without its model."""

    def sampling_answer(self, params: dict[str, Any]) -> dict[str, Any]:
        answer = super().sampling_answer(params)
        answer.pop("model")
        return answer


class HttpsRoot(ReferenceClient):
    """CLIENT-FEAT-002: a root that is an https:// URI."""

    def roots_answer(self) -> dict[str, Any]:
        return {"roots": [{"uri": "https://example.com/project", "name": "a root"}]}


class FormActionOk(ReferenceClient):
    """CLIENT-FEAT-003: answers a form with the action "ok"."""

    def form_elicit_answer(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**super().form_elicit_answer(params), "action": "ok"}


class UrlNoAction(ReferenceClient):
    """CLIENT-FEAT-004: answers a URL-mode request without an action."""

    def url_elicit_answer(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"opened": True}


class IgnoresListChanged(ReferenceClient):
    """CLIENT-LIST-001: takes no notice of notifications/tools/list_changed."""

    async def notified(self, message: dict[str, Any]) -> None:
        if message.get("method") != "notifications/tools/list_changed":
            await super().notified(message)


class NoResume(ReferenceClient):
    """CLIENT-GET-001: lets its broken GET stream go."""

    async def listen_and_resume(self) -> None:
        listen = getattr(self.wire, "listen", None)
        if listen is not None:
            await listen(None)


def _get_without(header: str) -> type[ReferenceClient]:
    """A mutant whose GETs lack `header` (its POSTs keep it)."""

    class GetWithout(ReferenceClient):
        def open_wire(self, address: str) -> Wire:
            wire = super().open_wire(address)
            if isinstance(wire, HttpWire):
                full = wire.get_headers
                wire.get_headers = lambda last_id: {  # type: ignore[method-assign]
                    k: v for k, v in full(last_id).items() if k != header
                }
            return wire

    GetWithout.__doc__ = f"GETs without {header}."
    return GetWithout


class SignalsFirst(ReferenceClient):
    """CLIENT-HYG-006: stdio: sends the server SIGTERM, then closes its stdin."""

    def open_wire(self, address: str) -> Wire:
        wire = super().open_wire(address)
        if isinstance(wire, StdioWire):
            close = wire.close

            async def signal_first() -> None:
                if wire.proc is not None and wire.proc.returncode is None:
                    wire.proc.terminate()
                    await asyncio.wait_for(wire.proc.wait(), 5)
                await close()

            wire.close = signal_first  # type: ignore[method-assign]
        return wire


class TaskWithoutId(ReferenceClient):
    """CLIENT-FEAT-005: a task-augmented answer whose task has no taskId."""

    def start_task(self, result: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
        created = super().start_task(result, metadata)
        created["task"] = {k: v for k, v in created["task"].items() if k != "taskId"}
        return created


class SamplingNoResult(ReferenceClient):
    """CLIENT-FEAT-001: answers sampling/createMessage with neither a result nor an error."""

    def answer_server(self, message: dict[str, Any]) -> dict[str, Any]:
        if message.get("method") == "sampling/createMessage":
            return {"jsonrpc": "2.0", "id": message["id"]}
        return super().answer_server(message)


class RefusesSampling(ReferenceClient):
    """No defect: the user declines the sampling request; the client answers with an error of its own."""

    def answer_server(self, message: dict[str, Any]) -> dict[str, Any]:
        if message.get("method") == "sampling/createMessage":
            refusal = {"code": -1, "message": "User rejected sampling request"}
            return {"jsonrpc": "2.0", "id": message["id"], "error": refusal}
        return super().answer_server(message)


#: Clients without a defect, whose runs show a verdict is not a false one (test_client_plus.py).
VARIANTS: dict[str, type[ReferenceClient]] = {"refuses-sampling": RefusesSampling}

MUTANTS: dict[str, tuple[type[ReferenceClient], str]] = {
    "reused-ids": (ReusedIds, "CLIENT-HYG-001"),
    "json-only-accept": (JsonOnlyAccept, "CLIENT-HYG-002"),
    "stdio-noise": (StdioNoise, "CLIENT-HYG-003"),
    "cancels-initialize": (CancelsInitialize, "CLIENT-HYG-004"),
    "undeclared-roots-change": (UndeclaredRootsChange, "CLIENT-HYG-005"),
    "ping-error": (PingError, "CLIENT-PING-001"),
    "eager-request": (EagerRequest, "CLIENT-INIT-001"),
    "eager-initialized": (EagerInitialized, "CLIENT-INIT-002"),
    "keeps-session-id": (KeepsSessionId, "CLIENT-SESS-001"),
    "gives-up-on-404": (GivesUpOn404, "CLIENT-SESS-001"),
    "cancels-unknown": (CancelsUnknown, "CLIENT-CANCEL-001"),
    "fraction-token": (FractionToken, "CLIENT-PROG-001"),
    "sampling-no-model": (SamplingNoModel, "CLIENT-FEAT-001"),
    "sampling-no-result": (SamplingNoResult, "CLIENT-FEAT-001"),
    "https-root": (HttpsRoot, "CLIENT-FEAT-002"),
    "form-action-ok": (FormActionOk, "CLIENT-FEAT-003"),
    "url-no-action": (UrlNoAction, "CLIENT-FEAT-004"),
    "ignores-list-changed": (IgnoresListChanged, "CLIENT-LIST-001"),
    "task-without-id": (TaskWithoutId, "CLIENT-FEAT-005"),
    "signals-first": (SignalsFirst, "CLIENT-HYG-006"),
    "no-resume": (NoResume, "CLIENT-GET-001"),
    "get-no-session-id": (_get_without("Mcp-Session-Id"), "CLIENT-GET-002"),
    "get-no-version": (_get_without("MCP-Protocol-Version"), "CLIENT-GET-003"),
}

if __name__ == "__main__":
    chosen = VARIANTS.get(sys.argv[1]) or MUTANTS[sys.argv[1]][0]
    sys.exit(main(chosen, sys.argv[2:]))
