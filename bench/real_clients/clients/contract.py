"""The official client contract and one user's session, shared by the kit's Python client programs.

Why: the kit judges SDK clients, so each program must be what a user of that SDK would write; the parts
that are not the SDK (reading the contract from argv and the environment, and what the user does once
connected) are written once here, and each program supplies only its SDK's own connect and calls.

The contract (the official conformance runner's, plus this harness's stdio and transport extension):
the last argument is the server's URL, or `stdio:` followed by the server's shell-quoted command line,
which the client starts as its stdio server; `MCP_CONFORMANCE_SCENARIO` names the scenario,
`MCP_CONFORMANCE_PROTOCOL_VERSION` the revision (default 2025-11-25), `MCP_CONFORMANCE_TRANSPORT` the
transport (`http`, `sse` or `stdio`) and `MCP_CONFORMANCE_CONTEXT` carries JSON (for instance the
arguments of the tool calls a scenario wants, `toolCalls`).

What the user does: list the tools and call every tool the SDK keeps (arguments from the context, else
built from the tool's required properties), then read every resource and get every prompt the server
declares (a sample string per required prompt argument); list the tools again if the server said the
list changed (the message handler, `Watch`). A tool result with `isError` is a result, not a failed
step. In `x-cancel` each call is made with a progress callback and cancelled at its first progress.
Two scenarios need a named step instead: `json-schema-ref-no-deref` only lists, and
`json-schema-2020-12-preservation` echoes the focal tool's input schema through the echo tool.

What the user's client offers the server, the same in every program: sampling (`SAMPLED`, a fixed
assistant text message from "contract-model", as a stub model would answer) and roots (`ROOTS`, one
root, "contract-root": a temporary folder, removed at exit); each program hands them to its SDK's own
sampling and roots handlers, so the SDK declares the capabilities and answers the requests.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit

DEFAULT_VERSION = "2025-11-25"
FOCAL_TOOL, ECHO_TOOL = "json_schema_2020_12_tool", "json_schema_echo"
#: What a typed required property gets when the context names no arguments for a tool.
SAMPLE = {"string": "x", "integer": 1, "number": 1, "boolean": True}

#: The user's model, a stub: every sampling request gets this assistant message (CreateMessageResult).
SAMPLED: dict[str, Any] = {
    "role": "assistant",
    "content": {"type": "text", "text": "Hello from the contract program."},
    "model": "contract-model",
    "stopReason": "endTurn",
}
#: The user's root folder: a temporary one, removed when the program exits.
_ROOT_FOLDER = tempfile.TemporaryDirectory(prefix="contract-root-")
ROOTS: list[dict[str, str]] = [{"uri": Path(_ROOT_FOLDER.name).as_uri(), "name": "contract-root"}]


@dataclass(frozen=True)
class Contract:
    """What the runner asked for: where the server is, and the scenario, revision, transport, context."""

    scenario: str
    version: str
    transport: str
    context: dict[str, Any]
    url: str = ""
    command: list[str] = field(default_factory=list)

    @property
    def modern(self) -> bool:
        """A revision of the stateless era (2026-07-28 on): the SDK is asked for it where it can be."""
        return self.version >= "2026-"


def read_contract(argv: list[str], environ: dict[str, str]) -> Contract:
    """The contract of this run; a ValueError says what is missing."""
    if len(argv) < 2:
        raise ValueError("usage: PROGRAM <server-url | stdio:COMMAND LINE> (the runner appends it)")
    target = argv[-1]
    context = json.loads(environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    common = {
        "scenario": environ.get("MCP_CONFORMANCE_SCENARIO", ""),
        "version": environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or DEFAULT_VERSION,
        "context": context if isinstance(context, dict) else {},
    }
    if target.startswith("stdio:"):
        command = shlex.split(target[len("stdio:") :])
        if not command:
            raise ValueError("stdio: names no command")
        return Contract(transport="stdio", command=command, **common)
    return Contract(transport=environ.get("MCP_CONFORMANCE_TRANSPORT") or "http", url=target, **common)


#: Where the authorization server sends the user back (nothing listens: the browser below reads the
#: redirect), and the client ID metadata document URL for an authorization server that supports them:
#: the one the official contract fixes (its auth/basic-cimd expects exactly it; no scenario fetches it).
REDIRECT_URI = "http://127.0.0.1:8976/callback"
CIMD_URL = "https://conformance-test.local/client-metadata.json"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *_args: Any, **_kwargs: Any) -> None:
        return None  # the 302 comes back as an HTTPError carrying its Location


class Browser:
    """The user's browser, headless: the scenario's authorization endpoint approves at once, so visiting
    the authorization URL is one GET whose redirect (not followed) carries the authorization response;
    its query (`code`, `state`, `iss`) is what the SDK's callback handler hands back. Not the SDK: what a
    user's browser and redirect listener do, written once for the Python programs."""

    def __init__(self) -> None:
        self.answer: dict[str, str] = {}

    async def visit(self, url: str) -> None:
        self.answer = await asyncio.to_thread(self._follow_once, url)

    @staticmethod
    def _follow_once(url: str) -> dict[str, str]:
        return dict(parse_qsl(urlsplit(redirect_of(url)).query))


def redirect_of(url: str) -> str:
    """Where a GET of `url` redirects to (its Location), the redirect not followed."""
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(url, timeout=10) as response:
            return str(response.headers.get("Location", ""))
    except urllib.error.HTTPError as redirect:
        return str(redirect.headers.get("Location", ""))


def browse(url: str, patience: float = 20.0) -> None:
    """A browser for an SDK that listens for the redirect itself (FastMCP's OAuth helper): the
    authorization URL visited once, then its redirect followed to the SDK's callback listener, tried
    again while that listener is not yet up. Runs detached (the SDK starts its listener after opening
    the browser)."""
    location = redirect_of(url)
    deadline = time.monotonic() + patience
    while location and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(location, timeout=10) as done:
                done.read()
            return
        except urllib.error.HTTPError:
            return  # the listener answered
        except OSError:
            time.sleep(0.2)


class MemoryStorage:
    """The SDK's `TokenStorage`, in memory: a run is one session. Seeded with pre-registered client
    information when the contract's context gives credentials."""

    def __init__(self, client_info: Any = None) -> None:
        self.tokens: Any = None
        self.client_info = client_info

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


#: A progress callback as the SDKs call it: (progress, total, message).
Progress = Callable[[float, float | None, str | None], Awaitable[None]]


class Watch:
    """What the user's message handler saw: a tool list change, for the user to list the tools again.
    Each program hands `handle` to its SDK's client as the message handler."""

    def __init__(self) -> None:
        self.tools_changed = False

    async def handle(self, message: Any) -> None:
        notification = getattr(message, "root", message)  # mcp 1.x wraps notifications in a root model
        if getattr(notification, "method", None) == "notifications/tools/list_changed":
            self.tools_changed = True


WATCH = Watch()


class Session(Protocol):
    """The calls a user makes, each a plain call of the SDK's client (JSON-like values in and out)."""

    async def list_tools(self) -> list[dict[str, Any]]: ...
    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any: ...
    async def call_tool_progress(
        self, name: str, arguments: dict[str, Any], on_progress: Progress
    ) -> Any: ...
    def capabilities(self) -> dict[str, Any]: ...
    async def list_resources(self) -> list[str]: ...
    async def read_resource(self, uri: str) -> Any: ...
    async def list_prompts(self) -> list[dict[str, Any]]: ...
    async def get_prompt(self, name: str, arguments: dict[str, str]) -> Any: ...


def _items(result: Any, field_name: str) -> list[Any]:
    """A listing's items: the SDKs return either the result (items in a field) or the items."""
    return list(getattr(result, field_name, result))


def _plain(model: Any) -> dict[str, Any]:
    """A pydantic model as the wire spells it."""
    return dict(model.model_dump(by_alias=True, exclude_none=True, mode="json"))


class SdkSession:
    """`Session` over a Python SDK client (mcp 1.x `ClientSession`, mcp 2.x and FastMCP `Client`): the
    calls are the SDK's own, of the same names in all three; only the shape of listings differs."""

    def __init__(
        self, client: Any, declared: dict[str, Any], progress: str = "progress_callback", **call_options: Any
    ) -> None:
        self.client, self.declared, self.call_options = client, declared, call_options
        self.progress = progress  # the name of call_tool's progress callback argument

    async def list_tools(self) -> list[dict[str, Any]]:
        return [_plain(tool) for tool in _items(await self.client.list_tools(), "tools")]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return await self.client.call_tool(name, arguments, **self.call_options)

    async def call_tool_progress(self, name: str, arguments: dict[str, Any], on_progress: Progress) -> Any:
        options = {**self.call_options, self.progress: on_progress}
        return await self.client.call_tool(name, arguments, **options)

    def capabilities(self) -> dict[str, Any]:
        return self.declared

    async def list_resources(self) -> list[str]:
        return [str(item.uri) for item in _items(await self.client.list_resources(), "resources")]

    async def read_resource(self, uri: str) -> Any:
        return await self.client.read_resource(uri)

    async def list_prompts(self) -> list[dict[str, Any]]:
        return [_plain(item) for item in _items(await self.client.list_prompts(), "prompts")]

    async def get_prompt(self, name: str, arguments: dict[str, str]) -> Any:
        return await self.client.get_prompt(name, arguments)


def arguments_for(tool: dict[str, Any], context: dict[str, Any]) -> dict[str, Any]:
    """The context's arguments for this tool, else a sample value per typed required property."""
    for call in context.get("toolCalls") or ():
        if isinstance(call, dict) and call.get("name") == tool.get("name"):
            return dict(call.get("arguments") or {})
    return samples_for(tool.get("inputSchema") or {})


def samples_for(schema: Any, defaults: bool = True) -> dict[str, Any]:
    """A sample value per typed required property of an object schema (`defaults=False`: only those
    without a default, which the SDK is to apply)."""
    properties = (schema.get("properties") if isinstance(schema, dict) else None) or {}
    wanted = [name for name in (schema.get("required") if isinstance(schema, dict) else None) or ()]
    return {
        name: SAMPLE[properties[name].get("type")]
        for name in wanted
        if properties.get(name, {}).get("type") in SAMPLE and (defaults or "default" not in properties[name])
    }


def form_content(params: Any) -> dict[str, Any]:
    """What the user types into an elicitation form (the SDK's request parameters, a pydantic model): a
    sample for each required field that has no default, nothing else (the defaults are the SDK's to
    fill in: elicitation-sep1034-client-defaults)."""
    return samples_for(_plain(params).get("requestedSchema"), defaults=False)


class Steps:
    """Runs each step, reporting a failed one on stderr and going on: the count decides the exit code."""

    def __init__(self) -> None:
        self.failed = 0

    async def run(self, what: str, step: Awaitable[Any]) -> Any:
        try:
            return await step
        except Exception as exc:  # the SDK's own error type differs per SDK: report any
            self.failed += 1
            print(f"{what} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            return None


#: How long x-cancel's call may run before its first progress (the scenario reports it at once).
PROGRESS_WAIT = 10.0


async def call_cancelled(session: Session, name: str, arguments: dict[str, Any]) -> Any:
    """x-cancel: the call made with a progress callback and cancelled at its first progress, as a user
    stops a long task; what goes on the wire then is the SDK's."""
    progressed = asyncio.Event()

    async def on_progress(_progress: float, _total: float | None, _message: str | None) -> None:
        progressed.set()

    call = asyncio.ensure_future(session.call_tool_progress(name, arguments, on_progress))
    waiting = asyncio.ensure_future(progressed.wait())
    await asyncio.wait({call, waiting}, timeout=PROGRESS_WAIT, return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    if call.done():
        return call.result()
    call.cancel()
    try:
        return await call
    except asyncio.CancelledError:
        return None


async def act(contract: Contract, session: Session) -> int:
    """The user's session for this scenario; how many steps failed."""
    steps = Steps()
    tools = await steps.run("tools/list", session.list_tools()) or []
    if contract.scenario == "json-schema-ref-no-deref":
        return steps.failed
    if contract.scenario == "json-schema-2020-12-preservation":
        focal = next((tool for tool in tools if tool.get("name") == FOCAL_TOOL), None)
        schema = (focal or {}).get("inputSchema")
        await steps.run(f"tools/call {ECHO_TOOL}", session.call_tool(ECHO_TOOL, {"schema": schema}))
        return steps.failed
    for tool in tools:
        name, arguments = tool.get("name", ""), arguments_for(tool, contract.context)
        if contract.scenario == "x-cancel":
            await steps.run(f"tools/call {name}", call_cancelled(session, name, arguments))
        else:
            await steps.run(f"tools/call {name}", session.call_tool(name, arguments))
    if WATCH.tools_changed or contract.scenario == "x-cancel":  # after a cancel, the session goes on
        await steps.run("tools/list (again)", session.list_tools())
    declared = session.capabilities()
    if "resources" in declared:
        for uri in await steps.run("resources/list", session.list_resources()) or []:
            await steps.run(f"resources/read {uri}", session.read_resource(uri))
    if "prompts" in declared:
        for prompt in await steps.run("prompts/list", session.list_prompts()) or []:
            name, wanted = prompt.get("name", ""), prompt.get("arguments") or ()
            arguments = {arg["name"]: SAMPLE["string"] for arg in wanted if arg.get("required")}
            await steps.run(f"prompts/get {name}", session.get_prompt(name, arguments))
    return steps.failed


def main(run: Callable[[Contract], Awaitable[int]]) -> int:
    """Read the contract, run the program's session, exit 0 only when every step succeeded."""
    try:
        contract = read_contract(sys.argv, dict(os.environ))
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    try:
        failed = asyncio.run(run(contract))
    except Exception:
        traceback.print_exc()
        return 1
    return 1 if failed else 0
