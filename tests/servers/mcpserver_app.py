"""A small server written the way the `mcp` SDK's docs show (MCPServer, decorators), for the real-server
tests: what a Python user of the SDK ships, with no code of the harness's in its answers.

    python -m tests.servers.mcpserver_app
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

app = MCPServer("mcpserver-demo")


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool(annotations=ToolAnnotations(readOnlyHint=True))
def shout(text: str, times: int = 1) -> str:
    """Repeat the text in capitals."""
    return " ".join([text.upper()] * times)


@app.resource("demo://hello")
def hello() -> str:
    """A fixed greeting."""
    return "hello"


@app.prompt()
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello {name}"


if __name__ == "__main__":
    app.run()
