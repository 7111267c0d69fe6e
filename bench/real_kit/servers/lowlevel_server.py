"""A tiny server on the low-level `mcp.server.lowlevel.Server` of the `mcp` SDK 1.x, for the real-server kit.

Why a server of our own: the low-level API is what other frameworks build on, and no package on PyPI ships a
server written on it alone. It runs in a venv of its own with `mcp<2` (the kit's manifest pins it); stdio.
"""

from __future__ import annotations

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

server: Server = Server("kit-lowlevel")


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    echo_schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    return [
        types.Tool(
            name="echo",
            description="Echo the text back",
            inputSchema=echo_schema,
            annotations=types.ToolAnnotations(readOnlyHint=True),
        )
    ]


@server.call_tool()
async def call_tool(name: str, arguments: dict[str, object]) -> list[types.TextContent]:
    if name != "echo":
        raise ValueError(f"unknown tool {name}")
    return [types.TextContent(type="text", text=str(arguments.get("text", "")))]


@server.list_resources()
async def list_resources() -> list[types.Resource]:
    return [types.Resource(uri="kit://readme", name="readme", mimeType="text/plain")]  # type: ignore[arg-type]


@server.read_resource()
async def read_resource(uri: object) -> str:
    if str(uri) != "kit://readme":
        raise ValueError(f"unknown resource {uri}")
    return "hello from the kit"


@server.list_prompts()
async def list_prompts() -> list[types.Prompt]:
    return [types.Prompt(name="greet", arguments=[types.PromptArgument(name="name", required=True)])]


@server.get_prompt()
async def get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
    if name != "greet":
        raise ValueError(f"unknown prompt {name}")
    who = (arguments or {}).get("name", "")
    text = types.TextContent(type="text", text=f"Hello {who}")
    return types.GetPromptResult(messages=[types.PromptMessage(role="user", content=text)])


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
