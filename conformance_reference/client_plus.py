"""The reference client's part for the harness's own scenarios (`x-...`, beyond the official suite): the
capabilities it declares there and how it honours them (sampling, roots, elicitation in form and URL
mode), the notifications it reacts to (progress, a changed tool list), a new session when the server
says 404, and a request it cancels. A mixin of `ReferenceClient`, so that each place a mutant changes
(tests/servers/client_plus_mutants.py) is one method here.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conformance_reference.client_wire import Wire

#: The scenarios this part acts out (the pack's `plus_scenarios`), all named `x-...`.
PREFIX = "x-"
#: Seconds the client waits for a notification a scenario promises (progress).
NOTICE_TIMEOUT = 5.0
#: Revisions with elicitation (2025-06-18 on) and with its URL mode (2025-11-25 on).
ELICITATION_SINCE = ("2025-06-18", "2025-11-25")
URL_MODE_SINCE = ("2025-11-25",)


class PlusBehaviour:
    """What the reference client does in the `x-` scenarios (mixed into `ReferenceClient`)."""

    scenario: str
    revision: str
    wire: Wire
    ids: itertools.count[int]

    # -- declared, and done --------------------------------------------------------------------------

    def plus_capabilities(self) -> dict[str, Any] | None:
        """What the client declares in the features scenario (None elsewhere: the base declaration)."""
        if self.scenario == "x-tasks":
            return {"sampling": {}, "tasks": {"requests": {"sampling": {"createMessage": {}}}}}
        if self.scenario != "x-features":
            return None
        declared: dict[str, Any] = {"sampling": {}, "roots": {"listChanged": True}}
        if self.revision in URL_MODE_SINCE:
            declared["elicitation"] = {"form": {}, "url": {}}
        elif self.revision in ELICITATION_SINCE:
            declared["elicitation"] = {}
        return declared

    def sampling_answer(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "a sampled answer"},
            "model": "reference-model",
            "stopReason": "endTurn",
        }

    def roots_answer(self) -> dict[str, Any]:
        return {"roots": [{"uri": "file:///tmp/mcp-conformance-root", "name": "a root"}]}

    def url_elicit_answer(self, params: dict[str, Any]) -> dict[str, Any]:
        """URL mode: the user consented to open the URL (no content: the interaction is out of band)."""
        return {"action": "accept"}

    def form_elicit_answer(self, params: dict[str, Any]) -> dict[str, Any]:
        fields = params.get("requestedSchema", {}).get("properties", {})
        return {"action": "accept", "content": {key: "a value" for key in fields}}

    def plus_answer(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The result of a server's request the `x-` scenarios send, or None when it is not one."""
        method, params = message.get("method"), message.get("params") or {}
        if method == "sampling/createMessage" and isinstance(params.get("task"), dict):
            return self.start_task(self.sampling_answer(params), params["task"])
        if method in ("tasks/get", "tasks/result"):
            return self.task_answer(method, params.get("taskId"))
        if method == "sampling/createMessage":
            return self.sampling_answer(params)
        if method == "roots/list":
            return self.roots_answer()
        if method == "elicitation/create" and self.scenario == "x-features":
            if params.get("mode") == "url":
                return self.url_elicit_answer(params)
            return self.form_elicit_answer(params)
        return None

    def start_task(self, result: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
        """A task-augmented request: its result is ready at once, kept for tasks/result."""
        tasks = self.__dict__.setdefault("tasks_kept", {})
        task_id = f"task-{len(tasks) + 1}"
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        task = {"taskId": task_id, "status": "completed", "createdAt": now, "lastUpdatedAt": now}
        tasks[task_id] = ({**task, "ttl": metadata.get("ttl")}, result)
        return {"task": tasks[task_id][0]}

    def task_answer(self, method: str, task_id: Any) -> dict[str, Any] | None:
        """tasks/get (the task's state) or tasks/result (its result); None for an unknown task."""
        kept = self.__dict__.get("tasks_kept", {}).get(task_id)
        if kept is None:
            return None
        return dict(kept[0] if method == "tasks/get" else kept[1])

    # -- notifications, sessions, cancellation --------------------------------------------------------

    async def notified(self, message: dict[str, Any]) -> None:
        """A notification from the server: progress wakes a waiting cancellation; a changed tool list
        is fetched again once the current act is done."""
        method = message.get("method")
        if method == "notifications/progress":
            self.progress_seen().set()
        elif method == "notifications/tools/list_changed":
            self.tools_stale = True

    def progress_seen(self) -> asyncio.Event:
        if not hasattr(self, "_progressed"):
            self._progressed = asyncio.Event()
        return self._progressed

    async def restart_session(self) -> None:
        """HTTP 404 on a request of the session: a new session, with a new initialize and no session ID."""
        await self.handshake()

    def progress_token(self) -> Any:
        return "progress-1"

    def cancel_params(self, request_id: Any) -> dict[str, Any]:
        return {"requestId": request_id, "reason": "the reference client gives up on it"}

    async def cancel_slow_call(self) -> None:
        """Call the slow tool with a progress token, and cancel it once its progress comes."""
        params = {"name": "slow_task", "arguments": {}, "_meta": {"progressToken": self.progress_token()}}
        message = self.message("tools/call", params, True)
        call = asyncio.create_task(self.wire.request(message))
        try:
            await asyncio.wait_for(self.progress_seen().wait(), NOTICE_TIMEOUT)
            await self.notify("notifications/cancelled", self.cancel_params(message["id"]))
        finally:
            call.cancel()
            await asyncio.gather(call, return_exceptions=True)
            self.wire.waiting.pop(message["id"], None)

    async def plus_act(self) -> None:
        """An `x-` scenario: the base act (list the tools, call each), the scenario's own steps, and a
        new tools/list when the server said its list changed."""
        self.tools_stale = False
        if self.scenario == "x-cancel":
            await self.cancel_slow_call()
        else:
            if self.scenario == "x-get-resume":
                await asyncio.wait_for(self.listen_and_resume(), NOTICE_TIMEOUT)
            await self.base_act()
        if self.tools_stale:
            await self.request("tools/list")
        if self.scenario == "x-features" and self.declares_roots_changes():
            await self.notify("notifications/roots/list_changed")

    async def listen_and_resume(self) -> None:
        """Open the GET stream for the server's messages; when it breaks, resume it from its last event."""
        listen = getattr(self.wire, "listen", None)
        if listen is not None:
            last_id = await listen(None)
            await listen(last_id)

    def declares_roots_changes(self) -> bool:
        roots = (self.plus_capabilities() or {}).get("roots")
        return isinstance(roots, dict) and roots.get("listChanged") is True

    # -- provided by ReferenceClient ----------------------------------------------------------------

    def message(self, method: str, params: dict[str, Any] | None, request: bool) -> dict[str, Any]:
        raise NotImplementedError

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        raise NotImplementedError

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        raise NotImplementedError

    async def handshake(self) -> None:
        raise NotImplementedError

    async def base_act(self) -> None:
        raise NotImplementedError
