"""The reference server's input tool: a read-only tool that asks its client for input.

Why: the base suite judges how a server asks for input (sampling, elicitation, roots), and a server
may ask only for what its client declared. The tool asks for each input the client declared, in the
form the revision has: a JSON-RPC request to the client while the call is handled (2024-11-05 to
2025-11-25), or an `InputRequiredResult` the client fulfils and retries with (2026-07-28, multi
round-trip requests). It asks nothing of a client that declared nothing. Mutants replace
`asks_for` or `input_required` to plant one defect each.
"""

from __future__ import annotations

from typing import Any, Final

import jsonschema
import mcp_types as types
from mcp.server import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from conformance_reference.handlers import JSON, argument_error_text, invalid_arguments, object_schema

__all__ = ["ASK_TOOL", "ask_for_input", "asks_for"]

ASK_TOOL: Final = types.Tool(
    name="ask_for_input",
    description=(
        "Ask the client for whatever input it declared (roots, a sampled message, a form), "
        "then say what came back."
    ),
    input_schema=object_schema({}),
    annotations=types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False),
)
_VALIDATOR: Final = jsonschema.Draft202012Validator(dict(ASK_TOOL.input_schema))
#: The opaque state a 2026-07-28 retry echoes. Tampering can do no worse than fail the call, so no
#: integrity protection is needed ("MAY be omitted only when tampering can cause nothing worse than
#: request failure").
REQUEST_STATE: Final = "ask-for-input:1"
FIRST_MODES: Final = "2025-11-25"
FIRST_ELICITATION: Final = "2025-06-18"

_RESULT_TYPES: Final[dict[str, type[types.Result]]] = {
    "roots/list": types.ListRootsResult,
    "sampling/createMessage": types.CreateMessageResult,
    "elicitation/create": types.ElicitResult,
}


def _declared(capabilities: types.ClientCapabilities | None) -> JSON:
    if capabilities is None:
        return {}
    return capabilities.model_dump(by_alias=True, exclude_none=True)


def asks_for(capabilities: JSON, revision: str) -> dict[str, JSON]:
    """The input requests (key -> {method, params}) for what the client declared, and nothing else."""
    asks: dict[str, JSON] = {}
    if isinstance(capabilities.get("roots"), dict):
        asks["roots"] = {"method": "roots/list"}
    if isinstance(capabilities.get("sampling"), dict):
        asks["sample"] = {
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello."}}],
                "maxTokens": 16,
            },
        }
    elicitation = capabilities.get("elicitation")
    if revision >= FIRST_ELICITATION and isinstance(elicitation, dict):
        form = revision < FIRST_MODES or "form" in elicitation or not elicitation
        if form:
            params: JSON = {
                "message": "What should the reference server call you?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            }
            if revision >= FIRST_MODES:
                params["mode"] = "form"
            asks["form"] = {"method": "elicitation/create", "params": params}
    return asks


def input_required(asks: dict[str, JSON]) -> types.InputRequiredResult:
    """The 2026-07-28 answer asking for `asks`: the requests and the state the retry echoes."""
    requests = {key: _request(ask) for key, ask in asks.items()}
    return types.InputRequiredResult(input_requests=requests, request_state=REQUEST_STATE)


def _request(ask: JSON) -> Any:
    model: Any = {
        "roots/list": types.ListRootsRequest,
        "sampling/createMessage": types.CreateMessageRequest,
        "elicitation/create": types.ElicitRequest,
    }[ask["method"]]
    return model.model_validate(ask)


def _summary(answers: dict[str, str]) -> types.CallToolResult:
    text = "; ".join(f"{key}: {value}" for key, value in answers.items()) or "the client declared no input"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def ask_for_input(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult | types.InputRequiredResult:
    """Ask for each declared input, then report what the client said (a refusal is reported too)."""
    revision = ctx.protocol_version
    error = jsonschema.exceptions.best_match(_VALIDATOR.iter_errors(dict(params.arguments or {})))
    if error is not None:
        return invalid_arguments(revision, argument_error_text(ASK_TOOL.name, error))
    asks = asks_for(_declared(ctx.session.client_capabilities), revision)
    if revision in MODERN_PROTOCOL_VERSIONS:
        responses = params.input_responses
        if asks and (params.request_state != REQUEST_STATE or not responses):
            return input_required(asks)
        return _summary({key: "answered" if key in (responses or {}) else "no answer" for key in asks})
    answers: dict[str, str] = {}
    for key, ask in asks.items():
        metadata = ServerMessageMetadata(related_request_id=ctx.request_id)
        try:
            await ctx.session.send_request(_request(ask), _RESULT_TYPES[ask["method"]], metadata=metadata)
        except MCPError as exc:
            answers[key] = f"refused ({exc.error.code})"
        else:
            answers[key] = "answered"
    return _summary(answers)
