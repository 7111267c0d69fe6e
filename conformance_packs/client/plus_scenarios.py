"""The harness's own client scenarios, beyond the official suite: each named `x-...` (no official scenario
is), played at the revisions and over the transports where the rule it exposes exists. A client written
to the official contract reads the name from `MCP_CONFORMANCE_SCENARIO` like any other; one that does
not know it still lists the tools and calls each with `{}`, as the official everything-client does for
a scenario it does not special-case, which is all most of them need.

Only the stateful revisions (2024-11-05 to 2025-11-25): 2026-07-28 has no request from server to
client (no ping, sampling, roots or elicitation request; schema.json has no ServerRequest), no
initialize and no session.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

from conformance.pack_api import LEGACY_REVISIONS, NO_ANSWER, Message, Peer, Refusal, Scenario, scenario
from conformance_packs.client.common import params_of

EMPTY_INPUT = {"type": "object", "properties": {}, "required": []}
#: How long the initialize answer is held back, so a client that does not wait for it shows.
INITIALIZE_DELAY = 0.3
#: How long the slow tool waits for the client's cancellation, and how often it looks.
CANCEL_WAIT = 5.0
#: How long x-get-resume's tool call waits for the broken GET stream to be resumed.
RESUME_WAIT = 5.0
#: Revisions with elicitation, and with its URL mode.
ELICITATION = ("2025-06-18", "2025-11-25")
URL_MODE = ("2025-11-25",)
#: Streamable HTTP's stateful revisions (the session ID and its 404).
SESSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")


def tool(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": EMPTY_INPUT}


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def declared(recording: Any) -> dict[str, Any]:
    """The capabilities the client declared in its last initialize."""
    opened = recording.requests("initialize")
    capabilities = params_of(opened[-1].value).get("capabilities") if opened else None
    return capabilities if isinstance(capabilities, dict) else {}


class PlusScenario(Scenario):
    """A scenario of the harness's own: the stateful revisions, every transport."""

    revisions: ClassVar[tuple[str, ...]] = LEGACY_REVISIONS


@scenario
class Ping(PlusScenario):
    """A tool whose call pings the client before it answers."""

    name = "x-ping"
    description = "the server pings the client while a tool call is open; the client answers {}"
    tools = (tool("ping_me", "Pings the client, then answers"),)

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        self.recording.facts["ping"] = await peer.ask("ping")
        return text_result("pinged")


@scenario
class InitOrder(PlusScenario):
    """The initialize answer held back a moment: what the client sends before it is judged."""

    name = "x-init-order"
    description = "the initialize result comes late; the client sends nothing but pings before it"
    tools = (tool("noop", "Does nothing"),)

    async def answer(self, message: Message, peer: Peer) -> Any:
        if message.method == "initialize" and "initialize-answered" not in self.recording.marks:
            await asyncio.sleep(INITIALIZE_DELAY)
            self.recording.mark("initialize-answered")
        return await super().answer(message, peer)

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        return text_result("done")


@scenario
class SessionExpired(PlusScenario):
    """The first tools/list of the session answered with HTTP 404: the session has ended."""

    name = "x-session-expired"
    description = "a request of the session gets HTTP 404; the client starts a new session"
    revisions = SESSIONS
    transports = ("http",)
    tools = (tool("noop", "Does nothing"),)

    def may_give_up(self) -> str:
        """A client that exits non-zero once its session was ended (it failed the request HTTP 404
        answered) is judged by CLIENT-SESS-001, which reads whether it initialized anew: one defect,
        one verdict, and not an ERROR that hides it."""
        if "session-ended" in self.recording.marks:
            return "its session was ended (HTTP 404); whether it started a new one is CLIENT-SESS-001's"
        return ""

    async def answer(self, message: Message, peer: Peer) -> Any:
        if message.method == "tools/list" and "session-ended" not in self.recording.marks:
            self.recording.mark("session-ended")
            return Refusal(-32001, "Session not found", status=404)
        return await super().answer(message, peer)

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        return text_result("done")


@scenario
class Cancel(PlusScenario):
    """A slow tool: it reports progress on the client's token and answers only if never cancelled."""

    name = "x-cancel"
    description = "the client calls slow_task with a progress token and cancels it after its progress"
    tools = (tool("slow_task", "Reports progress, then waits to be cancelled"),)

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        meta = params_of(message.value).get("_meta")
        progress = meta.get("progressToken") if isinstance(meta, dict) else None
        if progress is not None:
            notice = {"progressToken": progress, "progress": 1, "total": 2}
            await peer.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": notice})
        if await self.recording.until(
            lambda: bool(self.recording.requests("notifications/cancelled")), CANCEL_WAIT
        ):
            if self.transport == "http":
                await peer.close()
            return NO_ANSWER
        return text_result("never cancelled")


@scenario
class Features(PlusScenario):
    """A tool whose call asks the client for each feature it declared: sampling, roots, elicitation in
    form mode and, at 2025-11-25, URL mode. The answers are kept in `facts["asked"]`."""

    name = "x-features"
    description = "the server uses each client capability the client declared; the answers are judged"
    tools = (tool("use_features", "Asks the client for each feature it declared"),)

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        asked: dict[str, Any] = {}
        for feature, (method, params) in self.requests_for(declared(self.recording)).items():
            asked[feature] = await peer.ask(method, params)
        self.recording.facts["asked"] = asked
        return text_result(f"used {sorted(asked)}")

    def requests_for(self, capabilities: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
        """The server's request for each declared feature, as this revision spells it."""
        wanted: dict[str, tuple[str, dict[str, Any]]] = {}
        if "sampling" in capabilities:
            hello = {"role": "user", "content": {"type": "text", "text": "Say hello"}}
            wanted["sampling"] = ("sampling/createMessage", {"messages": [hello], "maxTokens": 20})
        if "roots" in capabilities:
            wanted["roots"] = ("roots/list", {})
        elicitation = capabilities.get("elicitation")
        if isinstance(elicitation, dict) and self.revision in ELICITATION:
            form = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
            params: dict[str, Any] = {"message": "Your name, please", "requestedSchema": form}
            if self.revision in URL_MODE:
                params["mode"] = "form"
            if self.revision not in URL_MODE or "form" in elicitation or "url" not in elicitation:
                wanted["form"] = ("elicitation/create", params)
            if self.revision in URL_MODE and "url" in elicitation:
                link = "https://example.com/mcp-conformance/consent"
                url = {"mode": "url", "message": "Open this page", "url": link, "elicitationId": "x-1"}
                wanted["url"] = ("elicitation/create", url)
        return wanted


@scenario
class ListChanged(PlusScenario):
    """A tool whose call says the tool list changed (on the call's own stream) before it answers."""

    name = "x-list-changed"
    description = "the server says its tool list changed; the client lists the tools again"
    capabilities: ClassVar[Mapping[str, Any]] = {"tools": {"listChanged": True}}
    tools = (tool("change_tools", "Changes the tool list"),)

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        await peer.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        self.recording.mark("list-changed")
        return text_result("the tool list changed")


@scenario
class GetResume(PlusScenario):
    """The client's GET stream (for the server's messages) breaks after one event; the client resumes it."""

    name = "x-get-resume"
    description = "the server breaks the client's GET stream; the client resumes it with Last-Event-ID"
    revisions = SESSIONS
    transports = ("http",)
    tools = (tool("noop", "Does nothing"),)

    async def on_get(self, peer: Peer) -> bool:
        if "get-broken" not in self.recording.marks:
            await peer.event(b"id: get-1\ndata: \n\n")
            self.recording.mark("get-broken")
        else:
            await peer.event(b": resumed, and nothing more to send\n\n")
            self.recording.mark("get-resumed")
        await peer.close()
        return True

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        """The call is answered once the broken stream was resumed (or RESUME_WAIT passed): a client
        reconnects on its own clock (the TypeScript SDKs wait a second), and one that ends its session
        at once when its calls are answered would otherwise never be seen resuming."""
        marks = self.recording.marks
        await self.recording.until(lambda: "get-resumed" in marks or "get-broken" not in marks, RESUME_WAIT)
        return text_result("done")


#: The revision with tasks (experimental there).
TASKS = ("2025-11-25",)


def declares_task_sampling(capabilities: dict[str, Any]) -> bool:
    tasks = capabilities.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    sampling = requests.get("sampling") if isinstance(requests, dict) else None
    return isinstance(sampling, dict) and "createMessage" in sampling


@scenario
class Tasks(PlusScenario):
    """A tool whose call asks for task-augmented sampling when the client declared it, then the task's
    state (tasks/get) and its result (tasks/result). The answers are kept in `facts["tasks"]`."""

    name = "x-tasks"
    unscored_track = "experimental"
    description = "the server asks for task-augmented sampling the client declared; the answers are judged"
    revisions = TASKS
    transports = ("http", "stdio")
    tools = (tool("use_tasks", "Asks the client for a sampling task"),)

    async def call_tool(self, name: str, arguments: Any, message: Message, peer: Peer) -> Any:
        answers: dict[str, Any] = {}
        self.recording.facts["tasks"] = answers
        if not declares_task_sampling(declared(self.recording)):
            return text_result("the client declared no task-augmented sampling")
        hello = {"role": "user", "content": {"type": "text", "text": "Say hello"}}
        params = {"messages": [hello], "maxTokens": 20, "task": {"ttl": 60000}}
        answers["created"] = await peer.ask("sampling/createMessage", params)
        task = answers["created"].get("result", {}).get("task")
        task_id = task.get("taskId") if isinstance(task, dict) else None
        if isinstance(task_id, str):
            answers["got"] = await peer.ask("tasks/get", {"taskId": task_id})
            answers["result"] = await peer.ask("tasks/result", {"taskId": task_id})
        return text_result("asked for a sampling task")
