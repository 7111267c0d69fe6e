"""The official-fixture pack's reference server: a fixture of the kind the official conformance suite
(`@modelcontextprotocol/conformance`) calls by name, written from its scenarios' descriptions.

Why: the pack judges what the official suite asks of an SDK's fixture server; its reference must show
every row met, so that a failing row against it is a harness bug, and its mutants
(tests/servers/official_fixture_mutants.py) plant one defect each in a `Fixture` method
(`fixture_tools`).

The tools, each annotated read-only (they change nothing, so the default `--call-tools safe` calls them)
but `test_custom_header`:

- both eras: `test_simple_text`, `test_image_content` (a 1x1 PNG), `test_audio_content` (a short WAV),
  `test_embedded_resource`, `test_multiple_content_types`, `test_error_handling` (fails with isError),
  `json_schema_2020_12_tool` (listed with 2020-12 keywords; called, it says so);
- 2025-11-25 (and older): `test_tool_with_logging` (three log messages on its request's stream),
  `test_reconnection` (over HTTP, closes its request's SSE stream before its result, which the event
  store keeps for a client resuming with Last-Event-ID; not read-only-annotated, so no sweep calls it), and
  `test_elicitation_sep1034_defaults` and `test_elicitation_sep1330_enums`, which ask a form of a client
  that declared elicitation (a JSON-RPC request) and say what came back;
- 2026-07-28: `test_custom_header` (a string parameter mirrored into an Mcp-Param header), the
  `test_input_required_result_*` tools (an InputRequiredResult per round, then a result), and
  `test_missing_capability`; a tool whose input the request's clientCapabilities do not declare is
  refused with -32021 naming it (test_missing_capability needs sampling).

    python -m conformance_reference.fixture_server                   # stdio
    python -m conformance_reference.fixture_server --http --port 0   # prints LISTENING http://127.0.0.1:<port>/mcp
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, Final

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from conformance_reference.base_prompts import LOG_LEVELS
from conformance_reference.fixture_tools import NEEDS, Fixture, done, text
from conformance_reference.handlers import (
    JSON,
    REFERENCE_VERSION,
    object_schema,
    one_page_tools,
    reference_server,
    refuse_cursor,
    unknown_tool,
)
from conformance_reference.serving import serve, serving_parser

__all__ = ["build_server", "main"]

NAME: Final = "mcp-conformance-official-fixture-reference"
TITLE: Final = "MCP conformance official-fixture reference server"
#: What 2026-07-28 asks of every result's _meta (SHOULD), which the SDK adds to the results it builds
#: and `answer` adds to the ones it passes through.
SERVER_INFO: Final = {
    "io.modelcontextprotocol/serverInfo": {"name": NAME, "title": TITLE, "version": REFERENCE_VERSION}
}
READ_ONLY: Final = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
#: Each content tool and the `Fixture` method that answers it.
CONTENT: Final = {
    "test_simple_text": "simple_text",
    "test_image_content": "image",
    "test_audio_content": "audio",
    "test_embedded_resource": "embedded",
    "test_multiple_content_types": "mixed",
    "test_error_handling": "error",
}
FORMS: Final = {
    "test_elicitation_sep1034_defaults": "defaults_form",
    "test_elicitation_sep1330_enums": "enums_form",
}
ROUNDS: Final = (
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
)
SCHEMA_TOOL: Final = "json_schema_2020_12_tool"
HEADER_TOOL: Final = "test_custom_header"
LOGGING_TOOL: Final = "test_tool_with_logging"
RECONNECT_TOOL: Final = "test_reconnection"
NEEDS_SAMPLING: Final = "test_missing_capability"
#: The 2026-07-28 triggers: each announces a change of its list to the listen streams that asked.
TRIGGERS: Final = {
    "test_trigger_tool_change": ToolsListChanged(),
    "test_trigger_prompt_change": PromptsListChanged(),
}


def _tool(name: str, description: str, schema: JSON | None = None, read_only: bool = True) -> types.Tool:
    return types.Tool(
        name=name,
        description=description,
        input_schema=schema or object_schema({}),
        annotations=READ_ONLY if read_only else None,
    )


def tools_for(fixture: Fixture, modern: bool) -> list[types.Tool]:
    """The tools a revision's client is shown: the forms and the logging tool in the legacy era, the
    multi-round, header and capability tools in 2026-07-28."""
    listed = [
        _tool(name, f"Official fixture: {method.replace('_', ' ')}.") for name, method in CONTENT.items()
    ]
    listed.append(
        _tool(
            SCHEMA_TOOL, "Official fixture: a tool whose inputSchema uses 2020-12", fixture.schema_2020_12()
        )
    )
    if modern:
        listed.append(
            _tool(
                HEADER_TOOL, "Official fixture: mirrors region into a header", fixture.header_schema(), False
            )
        )
        listed += [_tool(name, "Official fixture: asks for input, then completes.") for name in ROUNDS]
        listed.append(_tool(NEEDS_SAMPLING, "Official fixture: needs the sampling capability."))
        # Read-only all the same: they change nothing, only announce a change to listen streams.
        listed += [_tool(name, "Official fixture: announces a change of its list.") for name in TRIGGERS]
    else:
        listed.append(_tool(LOGGING_TOOL, "Official fixture: logs three messages while it runs."))
        # Not read-only-annotated: it closes its POST stream mid-call, for a client that polls.
        listed.append(
            _tool(RECONNECT_TOOL, "Official fixture: closes its stream, then answers.", None, False)
        )
        listed += [_tool(name, "Official fixture: asks a form of the client.") for name in FORMS]
    return listed


def declared(ctx: ServerRequestContext[Any]) -> JSON:
    """The client's capabilities: declared at initialize (legacy) or in this request's _meta (2026-07-28)."""
    caps = ctx.session.client_capabilities
    return caps.model_dump(by_alias=True, exclude_none=True) if caps is not None else {}


async def logged(fixture: Fixture, ctx: ServerRequestContext[Any], minimum: str) -> JSON:
    """Three info lines on the request's stream, unless the connection set a higher level."""
    for line in fixture.log_lines() if LOG_LEVELS.index("info") >= LOG_LEVELS.index(minimum) else []:
        await ctx.session.send_log_message("info", line, "fixture", related_request_id=ctx.request_id)
    return done(text("Logged while running."))


async def asked_form(fixture: Fixture, ctx: ServerRequestContext[Any], name: str) -> JSON:
    """A legacy form: asked of a client that declared elicitation, and the answer's action reported."""
    if not isinstance(declared(ctx).get("elicitation"), dict):
        return done(text(f"{name} needs a client that declared elicitation."), error=True)
    request = types.ElicitRequest.model_validate(getattr(fixture, FORMS[name])())
    metadata = ServerMessageMetadata(related_request_id=ctx.request_id)
    try:
        answer = await ctx.session.send_request(request, types.ElicitResult, metadata=metadata)
    except MCPError as exc:
        return done(text(f"The client refused the form ({exc.error.code})."), error=True)
    return done(text(f"Elicitation completed: action={answer.action}"))


def round_trip(fixture: Fixture, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> JSON:
    """A 2026-07-28 multi-round tool: the round the echoed requestState names, asked again until all of
    its keys are answered; the result after the last round."""
    rounds = fixture.rounds(params.name)
    state, given = params.request_state, dict(params.input_responses or {})
    states = [s for _, s in rounds]
    at = states.index(state) if state is not None and state in states else 0
    asks, current = rounds[at]
    caps = declared(ctx)
    for request in asks.values():
        needed = NEEDS[request["method"]]
        if not isinstance(caps.get(needed), dict):
            raise fixture.missing(needed)
    if all(key in given for key in asks) and (at > 0 or state == current):
        if at + 1 == len(rounds):
            return fixture.completed(params.name, current)
        asks, current = rounds[at + 1]
    return {
        "resultType": "input_required",
        "inputRequests": asks,
        **({"requestState": current} if current else {}),
    }


def side_handlers(
    fixture: Fixture, levels: dict[int, tuple[Any, str]], listen: ListenHandler
) -> tuple[Any, ...]:
    """The handlers beside the tools: one prompt, logging/setLevel (into `levels`) and, 2026-07-28,
    subscriptions/listen (`listen`, fed by the triggers' bus)."""
    prompt = types.Prompt(
        name=fixture.prompt_name(), description="Official fixture: a prompt without arguments."
    )

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        refuse_cursor(params)
        return types.ListPromptsResult(prompts=[prompt])

    async def get_prompt(ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> Any:
        if params.name != prompt.name:
            raise MCPError(code=types.INVALID_PARAMS, message="Unknown prompt")
        message = types.PromptMessage(
            role="user", content=types.TextContent(type="text", text="A simple prompt.")
        )
        return types.GetPromptResult(messages=[message])

    async def set_logging_level(
        ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        client = ctx.session.client_params
        levels[id(client)] = (client, params.level)
        return types.EmptyResult()

    async def subscriptions_listen(
        ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        return await listen(ctx, params)

    return list_prompts, get_prompt, set_logging_level, subscriptions_listen


def build_server(fixture: Fixture | None = None) -> Server[Any]:
    """The fixture server (`fixture`: a mutant passes its own): its tools, one prompt, and (2026-07-28)
    subscriptions/listen, which the SDK serves from a bus the triggers publish to; serving it declares
    tools.listChanged and prompts.listChanged in server/discover."""
    fixture = fixture or Fixture()
    #: The level each legacy connection set with logging/setLevel (its client params kept, so the id
    #: stays its own); the logging tool logs at or above it.
    levels: dict[int, tuple[Any, str]] = {}
    bus = InMemorySubscriptionBus()
    legacy, modern = tools_for(fixture, False), tools_for(fixture, True)
    listers = {False: one_page_tools(legacy), True: one_page_tools(modern)}

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
        return await listers[ctx.protocol_version in MODERN_PROTOCOL_VERSIONS](ctx, params)

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
        raise unknown_tool(params.name)  # every listed tool is answered by `answer` first

    async def answer(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """tools/call of a fixture tool, answered here: the SDK passes a middleware's result through as
        it is, so a mutant's result that breaks the schema reaches the wire for the pack to judge."""
        modern_era = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        name = ctx.params.get("name") if ctx.method == "tools/call" and isinstance(ctx.params, dict) else None
        if name not in {t.name for t in (modern if modern_era else legacy)}:
            return await call_next(ctx)
        params = types.CallToolRequestParams.model_validate(ctx.params)
        if params.name in TRIGGERS:
            await bus.publish(fixture.announced(TRIGGERS[params.name]))
        minimum = levels.get(id(ctx.session.client_params), (None, "debug"))[1]
        result = await called(fixture, ctx, params, minimum)
        return {"resultType": "complete", **result, "_meta": SERVER_INFO} if modern_era else result

    server = reference_server(
        NAME,
        handlers=(list_tools, call_tool, *side_handlers(fixture, levels, ListenHandler(bus))),
        title=TITLE,
        instructions="Reference target of the official-fixture suite: the official suite's fixture tools.",
        tool_input_schema=lambda name: next((t.input_schema for t in modern if t.name == name), None),
    )
    server.middleware.append(answer)
    return server


async def called(
    fixture: Fixture,
    ctx: ServerRequestContext[Any],
    params: types.CallToolRequestParams,
    minimum: str = "debug",
) -> JSON:
    """The answer of a listed fixture tool (`minimum`: the connection's logging/setLevel level)."""
    if params.name in CONTENT:
        return dict(getattr(fixture, CONTENT[params.name])())
    if params.name == LOGGING_TOOL:
        return await logged(fixture, ctx, minimum)
    if params.name in FORMS:
        return await asked_form(fixture, ctx, params.name)
    if params.name in ROUNDS:
        return round_trip(fixture, ctx, params)
    if params.name == RECONNECT_TOOL:
        if ctx.close_sse_stream is not None:
            await ctx.close_sse_stream()  # the result then reaches a client that resumes the stream
        return done(text("The stream was closed; this result came after the client reconnected."))
    if params.name == NEEDS_SAMPLING and not isinstance(declared(ctx).get("sampling"), dict):
        raise fixture.missing("sampling")
    return done(text(f"{params.name} ran."))


def main(argv: Sequence[str] | None = None, fixture: Fixture | None = None) -> int:
    """CLI entry point; returns the process exit status (0 on EOF, SIGTERM or SIGINT)."""
    parser = serving_parser(
        "python -m conformance_reference.fixture_server",
        "Run the official-fixture suite's reference server (stdio by default).",
    )
    return serve(build_server(fixture), parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
