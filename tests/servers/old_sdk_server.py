"""A server built with an old `mcp` SDK from PyPI, run from a venv of its own, never the project's.

With mcp 1.9.x it is a FastMCP server (2025-03-26 at most: `SUPPORTED_PROTOCOL_VERSIONS` is
2024-11-05 and 2025-03-26); with mcp 1.1.x, whose only revision is 2024-11-05 and which has no FastMCP,
it uses the low-level `Server`. Either is an independent implementation of its revisions, so the
harness's verdicts on it are not the harness agreeing with itself. tests/protocol/test_legacy_revisions.py
builds the venvs and runs this file with their Python; the project's own `mcp` never imports it.

    <old venv>/bin/python tests/servers/old_sdk_server.py
"""

from __future__ import annotations

from typing import Any


def fastmcp_server() -> Any:
    from mcp.server.fastmcp import FastMCP
    from mcp.types import ToolAnnotations

    app = FastMCP("old-sdk-fastmcp")

    @app.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @app.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @app.resource("old://docs/readme", mime_type="text/plain")
    def readme() -> str:
        """A fixed text resource."""
        return "hello"

    return app


def low_level_main() -> None:
    import anyio
    import mcp.types as types
    from mcp.server import Server
    from mcp.server.stdio import stdio_server
    from pydantic import AnyUrl

    server: Any = Server("old-sdk-lowlevel")
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    integer = {"type": "integer"}
    add_schema = {"type": "object", "properties": {"a": integer, "b": integer}, "required": ["a", "b"]}

    @server.list_tools()  # type: ignore[misc]
    async def list_tools() -> list[Any]:
        # Two tools, so the listing has an order to compare (with one, the order check judges nothing).
        return [
            types.Tool(name="echo", description="Echo the text back.", inputSchema=schema),
            types.Tool(name="add", description="Add two integers.", inputSchema=add_schema),
        ]

    @server.call_tool()  # type: ignore[misc]
    async def call_tool(name: str, arguments: dict[str, Any]) -> list[Any]:
        if name == "add":
            if not (isinstance(arguments.get("a"), int) and isinstance(arguments.get("b"), int)):
                raise ValueError("a and b must be integers")
            return [types.TextContent(type="text", text=str(arguments["a"] + arguments["b"]))]
        if name != "echo":
            raise ValueError(f"Unknown tool: {name}")
        if not isinstance(arguments.get("text"), str):
            raise ValueError("text is required")
        return [types.TextContent(type="text", text=arguments["text"])]

    @server.list_resources()  # type: ignore[misc]
    async def list_resources() -> list[Any]:
        return [types.Resource(uri=AnyUrl("old://docs/readme"), name="readme", mimeType="text/plain")]

    @server.read_resource()  # type: ignore[misc]
    async def read_resource(uri: Any) -> str:
        if str(uri) != "old://docs/readme":
            raise ValueError("Resource not found")
        return "hello"

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


def main() -> None:
    try:
        app = fastmcp_server()
    except ImportError:  # mcp 1.1.x: no FastMCP yet
        low_level_main()
    else:
        app.run()


if __name__ == "__main__":
    main()
