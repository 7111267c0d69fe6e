"""A tiny FastMCP server (the `fastmcp` package), for the real-server kit: stdio, or Streamable HTTP on
127.0.0.1 with `http PORT`.
"""

from __future__ import annotations

import sys

from fastmcp import FastMCP

mcp = FastMCP("kit-fastmcp")


@mcp.tool(annotations={"readOnlyHint": True})
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@mcp.tool(annotations={"readOnlyHint": True})
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.resource("kit://readme")
def readme() -> str:
    """A static text."""
    return "hello from the kit"


@mcp.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello {name}"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        mcp.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False)
    else:
        mcp.run(show_banner=False)
