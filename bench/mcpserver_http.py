"""The `mcp` SDK's MCPServer app of the real-server tests (`tests/servers/mcpserver_app.py`) over
Streamable HTTP on 127.0.0.1, for bench/real_servers.py: prints `LISTENING http://127.0.0.1:PORT/mcp`.

Why a socket bound before the server starts: the port is the kernel's choice (no port picked, freed and
hoped for), and it accepts connections from the moment it listens, so the LISTENING line needs no poll;
uvicorn serves that socket as soon as it is up.

    python bench/mcpserver_http.py
"""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path

REPO_DIR = Path(__file__).resolve().parent.parent


def main() -> int:
    import uvicorn

    sys.path.insert(0, str(REPO_DIR))
    from tests.servers.mcpserver_app import app

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    port = sock.getsockname()[1]
    config = uvicorn.Config(app.streamable_http_app(host="127.0.0.1"), log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    print(f"LISTENING http://127.0.0.1:{port}/mcp", flush=True)
    asyncio.run(server.serve(sockets=[sock]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
