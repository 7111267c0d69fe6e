"""Start the client under test by the official contract and bound it in time.

The contract (`@modelcontextprotocol/conformance`'s client runner, which the SDKs' conformance client
programs implement): the command runs through the shell with the scenario server's address appended
as its last argument, and `MCP_CONFORMANCE_SCENARIO`, `MCP_CONFORMANCE_PROTOCOL_VERSION` and, when the
scenario has any, `MCP_CONFORMANCE_CONTEXT` (JSON) in its environment. This harness adds
`MCP_CONFORMANCE_TRANSPORT` (`http`, `sse`, `stdio`); over stdio the address is `stdio:` followed by
the command line of the server the client must start (shell-quoted).

The client runs in a process group of its own (`adapters.stdio.start_tagged`), which is killed with
everything in it when it outlives its time (`adapters.stdio.stop_process_group`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from conformance.adapters.stdio import start_tagged, stop_process_group

#: How many bytes of the client's stderr (and stdout) the verdicts keep.
TAIL_BYTES = 4000


@dataclass(frozen=True)
class Contract:
    """What the client is given: its address (argv's last) and its environment variables."""

    address: str
    env: Mapping[str, str]


def contract(scenario: str, revision: str, transport: str, address: str, context: Any = None) -> Contract:
    env = {
        "MCP_CONFORMANCE_SCENARIO": scenario,
        "MCP_CONFORMANCE_PROTOCOL_VERSION": revision,
        "MCP_CONFORMANCE_TRANSPORT": transport,
    }
    if context is not None:
        env["MCP_CONFORMANCE_CONTEXT"] = json.dumps({"name": scenario, **context})
    return Contract(address, env)


def relay_address(port: int) -> str:
    """`stdio:` and the command line of the relay to the scenario server on `port`."""
    argv = [sys.executable, "-m", "conformance.clients.relay", "--connect", f"127.0.0.1:{port}"]
    return "stdio:" + shlex.join(argv)


@dataclass(frozen=True)
class Exit:
    """How the client's process ended."""

    returncode: int | None
    timed_out: bool
    duration: float
    stderr: str
    stdout: str
    #: The time it was given.
    limit: float = 0.0

    def describe(self) -> str:
        if self.timed_out:
            return f"the client did not exit within {self.limit:g} s and was killed"
        return f"the client exited with status {self.returncode} after {self.duration:.1f} s"


def _tail(data: bytes | bytearray) -> str:
    return data[-TAIL_BYTES:].decode("utf-8", "replace")


async def _drain(stream: asyncio.StreamReader | None, into: bytearray) -> None:
    if stream is None:
        return
    while chunk := await stream.read(65536):
        into += chunk
        del into[: max(0, len(into) - 4 * TAIL_BYTES)]


async def run_client(command: str, given: Contract, timeout: float) -> Exit:
    """Run `command` (a shell command line) with the contract; kill its group past `timeout`."""
    argv = ["/bin/sh", "-c", f"{command} {shlex.quote(given.address)}"]
    started = time.monotonic()
    proc = await start_tagged(argv, stdin=subprocess.DEVNULL, env={**os.environ, **given.env})
    out, err = bytearray(), bytearray()
    readers = asyncio.gather(_drain(proc.stdout, out), _drain(proc.stderr, err))
    timed_out = False
    try:
        await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        timed_out = True
    finally:
        await stop_process_group(proc, exit_wait=0.0 if timed_out else 0.5)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(readers, 2)
    ended = None if timed_out else proc.returncode
    return Exit(ended, timed_out, time.monotonic() - started, _tail(err), _tail(out), timeout)
