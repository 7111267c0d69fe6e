"""The client side: the harness plays the MCP server a client under test talks to.

A scenario server (`scenario.py`) answers what the client sends per a pack's script and records the
exact bytes it sent (`wire.py`), over Streamable HTTP or legacy HTTP+SSE (`httpd.py`) or stdio (the
client starts `relay.py`, which pipes its stdin and stdout to the harness: `stdio.py`); `launch.py`
starts the client with the official contract (the server's URL last, `MCP_CONFORMANCE_*` in its
environment); `run.py` runs every (scenario, transport, revision), judges the recording with the
client pack's checks (`checks.py`) and feeds the canonical report the servers' runs feed.
"""
