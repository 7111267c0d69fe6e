"""Mutants of the reference server's input tool (`conformance_reference.base_input`), one defect each.

Each defect replaces one piece of `base_input` (what is asked, how a request is built, the 2026-07-28
answer) before the reference server is built; everything else is the reference. The base suite's input
checks run against each and must show exactly the expected non-PASS verdicts.

    python -m tests.servers.base_input_mutants --defect NAME [reference server options]
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, Final

import mcp_types as types
from mcp.server import Server, ServerRequestContext, runner
from mcp.server.context import CallNext, HandlerResult
from mcp.shared.exceptions import MCPError

from conformance_reference import base_input, base_server

JSON = dict[str, Any]
_asks_for = base_input.asks_for
_request = base_input._request
_input_required = base_input.input_required
_ask_for_input = base_input.ask_for_input
FORM = {"type": "object", "properties": {"name": {"type": "string"}}}
#: A copy of stdout taken before the SDK claims it (`modern-request` only).
_WIRE: list[int] = []
SAY_HELLO = [{"role": "user", "content": {"type": "text", "text": "Say hello."}}]


def _raw_request(ask: JSON) -> Any:
    """The request as given, unvalidated: the SDK's models refuse the broken shapes a mutant needs."""
    return _Raw.model_construct(**ask)


def _raw_input_required(asks: dict[str, JSON]) -> Any:
    """The reference's InputRequiredResult, its inputRequests kept as given (unvalidated)."""
    return {"resultType": "input_required", "inputRequests": asks, "requestState": base_input.REQUEST_STATE}


class _Raw(types.Request[Any, Any]):
    """A request model that serializes whatever it was given."""

    method: Any
    params: Any = None


def _modes(revision: str) -> bool:
    return revision >= base_input.FIRST_MODES


def ask_undeclared(capabilities: JSON, revision: str) -> dict[str, JSON]:
    """Asks for roots and sampling whatever the client declared (and for what it declared)."""
    return {
        **_asks_for(capabilities, revision),
        "roots": {"method": "roots/list"},
        "sample": {"method": "sampling/createMessage", "params": {"messages": SAY_HELLO, "maxTokens": 16}},
    }


def url_undeclared(capabilities: JSON, revision: str) -> dict[str, JSON]:
    """Asks for a URL-mode elicitation from a client that declared form mode only."""
    asks = _asks_for(capabilities, revision)
    if _modes(revision) and isinstance(capabilities.get("elicitation"), dict):
        asks["form"] = {
            "method": "elicitation/create",
            "params": {
                "mode": "url",
                "message": "Sign in",
                "url": "https://example.com/x",
                "elicitationId": "e1",
            },
        }
    return asks


def _sampling_params(capabilities: JSON, revision: str, asks: dict[str, JSON]) -> JSON | None:
    return asks["sample"]["params"] if "sample" in asks and _modes(revision) else None


def sampling_tools(capabilities: JSON, revision: str) -> dict[str, JSON]:
    """Sends tool-enabled sampling to a client that did not declare sampling.tools."""
    asks = _asks_for(capabilities, revision)
    params = _sampling_params(capabilities, revision, asks)
    if params is not None:
        params["tools"] = [{"name": "lookup", "inputSchema": {"type": "object"}}]
    return asks


def include_context(capabilities: JSON, revision: str) -> dict[str, JSON]:
    """Asks for includeContext "thisServer" although sampling.context was not declared."""
    asks = _asks_for(capabilities, revision)
    params = _sampling_params(capabilities, revision, asks)
    if params is not None:
        params["includeContext"] = "thisServer"
    return asks


def tool_result_mixed(capabilities: JSON, revision: str) -> dict[str, JSON]:
    """A user message mixes a tool result with text."""
    asks = _asks_for(capabilities, revision)
    params = _sampling_params(capabilities, revision, asks)
    if params is not None:
        params["messages"] = [
            {"role": "user", "content": {"type": "text", "text": "Look it up."}},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "lookup", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "toolUseId": "t1", "content": [{"type": "text", "text": "42"}]},
                    {"type": "text", "text": "and also this"},
                ],
            },
        ]
    return asks


def elicitation_no_schema(capabilities: JSON, revision: str) -> dict[str, JSON]:
    """A form-mode elicitation without its requestedSchema."""
    asks = _asks_for(capabilities, revision)
    if "form" in asks:
        del asks["form"]["params"]["requestedSchema"]
    return asks


def sampling_bad_role(capabilities: JSON, revision: str) -> dict[str, JSON]:
    """A sampling message with the role "system"."""
    asks = _asks_for(capabilities, revision)
    if "sample" in asks:
        asks["sample"]["params"]["messages"] = [
            {"role": "system", "content": {"type": "text", "text": "Hi."}}
        ]
    return asks


def mrtr_bad_kind(capabilities: JSON, revision: str) -> dict[str, JSON]:
    """An inputRequests entry that is no input request (tools/list)."""
    asks = _asks_for(capabilities, revision)
    if asks:
        asks["other"] = {"method": "tools/list"}
    return asks


def mrtr_empty(asks: dict[str, JSON]) -> Any:
    """An InputRequiredResult with neither inputRequests nor requestState."""
    return {"resultType": "input_required"}


async def retry_error(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
    """A retry carrying the echoed requestState is refused with an error."""
    if params.request_state is not None:
        raise MCPError(code=types.INVALID_PARAMS, message="retries are not accepted")
    return await _ask_for_input(ctx, params)


async def url_error_form(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
    """A URLElicitationRequiredError (-32042) that lists a form-mode elicitation (to a client that
    declared no input; one that declared some is asked as the reference asks)."""
    if ctx.protocol_version == "2025-11-25" and not base_input._declared(ctx.session.client_capabilities):
        raise MCPError(
            code=-32042,
            message="This request requires more information.",
            data={"elicitations": [{"mode": "form", "message": "Who are you?", "requestedSchema": FORM}]},
        )
    return await _ask_for_input(ctx, params)


async def modern_request(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
    """In 2026-07-28, asks for roots with a JSON-RPC request on stdout (the SDK refuses to send one,
    and diverts fd 1: the line goes to a copy of the wire taken before it did, in one atomic write)."""
    if ctx.protocol_version in base_input.MODERN_PROTOCOL_VERSIONS:
        os.write(_WIRE[0], b'{"jsonrpc":"2.0","id":"mutant-roots","method":"roots/list"}\n')
    return await _ask_for_input(ctx, params)


async def asks_unrelated(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
    """Before 2026-07-28, asks for each declared input with no related request (as server-everything
    asks roots/list): over Streamable HTTP such a request goes on the GET stream, not the call's own
    POST stream. Not a defect: a client that holds the GET stream open answers it there."""
    revision = ctx.protocol_version
    if revision in base_input.MODERN_PROTOCOL_VERSIONS:
        return await _ask_for_input(ctx, params)
    answers: dict[str, str] = {}
    for key, ask in _asks_for(base_input._declared(ctx.session.client_capabilities), revision).items():
        try:
            await ctx.session.send_request(_request(ask), base_input._RESULT_TYPES[ask["method"]])
        except MCPError as exc:
            answers[key] = f"refused ({exc.error.code})"
        else:
            answers[key] = "answered"
    return base_input._summary(answers)


class TemplatesInputRequired:
    """Answers resources/templates/list in 2026-07-28 with an InputRequiredResult."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if (
            ctx.method == "resources/templates/list"
            and ctx.protocol_version in base_input.MODERN_PROTOCOL_VERSIONS
        ):
            return types.InputRequiredResult(request_state="templates:1")
        return await call_next(ctx)


class _RetryTaken:
    """A tools/call retry that `takes` (its raw params, before the SDK validates them) made into one the
    reference completes: a server that takes such a retry as it came."""

    #: An answer the reference takes for any key (any InputResponse will do).
    ANSWER: Final = {"action": "cancel"}

    def takes(self, params: JSON) -> bool:
        raise NotImplementedError

    def fix(self, params: JSON) -> None:
        """What makes the retry one the reference completes: the answers of the state it gave."""
        params["inputResponses"] = {"taken": self.ANSWER}
        params["requestState"] = base_input.REQUEST_STATE

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "tools/call" and isinstance(ctx.params, dict) and self.takes(ctx.params):
            self.fix(ctx.params)
        return await call_next(ctx)


class InvalidAnswersTaken(_RetryTaken):
    """Completes a retry whose inputResponses values are no objects (numbers)."""

    def takes(self, params: JSON) -> bool:
        answers = params.get("inputResponses")
        return isinstance(answers, dict) and any(not isinstance(v, dict) for v in answers.values())


class NullAnswersTaken(_RetryTaken):
    """Completes a retry whose inputResponses is null."""

    def takes(self, params: JSON) -> bool:
        return "inputResponses" in params and params["inputResponses"] is None


class StateUnchecked(_RetryTaken):
    """Completes a retry with answers whatever its requestState says (the state never verified)."""

    def takes(self, params: JSON) -> bool:
        state, answers = params.get("requestState"), params.get("inputResponses")
        return isinstance(state, str) and state != base_input.REQUEST_STATE and bool(answers)


class PromptAsksForever:
    """Never takes the answers a prompts/get retry brings, so a prompt that asks for input asks again and
    again (its tools as the reference)."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "prompts/get" and isinstance(ctx.params, dict):
            ctx.params.pop("inputResponses", None)
        return await call_next(ctx)


class TaskRefused:
    """Refuses a task-augmented tools/call with -32601 although it declares no tasks capability (the
    reference without its tasks)."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "tools/call" and isinstance(ctx.params, dict) and "task" in ctx.params:
            raise MCPError(code=types.METHOD_NOT_FOUND, message="tasks are not supported")
        return await call_next(ctx)


DEFECTS: dict[str, tuple[str, Callable[..., Any]]] = {
    "none": ("asks_for", _asks_for),
    "ask-undeclared": ("asks_for", ask_undeclared),
    "url-undeclared": ("asks_for", url_undeclared),
    "sampling-tools": ("asks_for", sampling_tools),
    "include-context": ("asks_for", include_context),
    "tool-result-mixed": ("asks_for", tool_result_mixed),
    "elicitation-no-schema": ("asks_for", elicitation_no_schema),
    "sampling-bad-role": ("asks_for", sampling_bad_role),
    "mrtr-bad-kind": ("asks_for", mrtr_bad_kind),
    "mrtr-empty": ("input_required", mrtr_empty),
    "retry-error": ("ask_for_input", retry_error),
    "url-error-form": ("ask_for_input", url_error_form),
    "modern-request": ("ask_for_input", modern_request),
    "asks-unrelated": ("ask_for_input", asks_unrelated),
    "mrtr-on-list": ("middleware", TemplatesInputRequired),
    "task-refused": ("middleware", TaskRefused),
    "invalid-answers-taken": ("middleware", InvalidAnswersTaken),
    "null-answers-taken": ("middleware", NullAnswersTaken),
    "state-unchecked": ("middleware", StateUnchecked),
    "prompt-asks-forever": ("middleware", PromptAsksForever),
}


def _lenient_results() -> None:
    """Let an input_required result out as the handler shaped it: the SDK validates every result it
    sends (and refuses the broken ones these mutants exist to send)."""
    methods = runner._methods
    strict = methods.serialize_server_result

    def serialize(method: str, version: str, dumped: dict[str, Any]) -> dict[str, Any]:
        if dumped.get("resultType") == "input_required":
            return dumped
        return strict(method, version, dumped)

    methods.serialize_server_result = serialize


def main(argv: list[str]) -> int:
    defect = "none"
    if "--defect" in argv:
        at = argv.index("--defect")
        defect, argv = argv[at + 1], argv[:at] + argv[at + 2 :]
    name, replacement = DEFECTS[defect]
    if defect == "modern-request" and "--http" not in argv:
        _WIRE.append(os.dup(1))
    _lenient_results()
    base_input._request = _raw_request
    base_input.input_required = _raw_input_required
    if name == "middleware":
        build = base_server.build_server

        def build_with(**kwargs: Any) -> Server[Any]:
            if defect == "task-refused":
                kwargs["task_support"] = False  # BASE-TASK-001 is about a server that declares no tasks
            server = build(**kwargs)
            server.middleware.insert(0, replacement())
            return server

        base_server.build_server = build_with  # type: ignore[assignment]
    else:
        setattr(base_input, name, replacement)
        if name == "ask_for_input":
            base_server.ask_for_input = replacement
    return base_server.main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
