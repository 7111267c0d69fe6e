"""Start a pack's reference processes as forks of one process that has imported them (a fork server).

Why: the embedded default starts about a hundred reference processes (each revision's probe, fresh
sessions, the fixture controllers), and a reference built on the `mcp` SDK spends most of a second of
CPU importing it before it reads a byte. A pack that names a fork server module
(`Pack.reference_forkserver`, which implements `serve FD` and `spawn MODULE ARGS...`) has its reference
commands rewritten to `python -m FORKSERVER spawn MODULE ARGS...`, and this module starts that fork
server once per harness process:

- The listening socket is bound here, before the fork server starts importing, so a spawner can connect
  at once and waits in the queue while the imports finish.
- The fork server's stdin is a pipe from this process: when the harness exits, however it exits, the
  pipe closes and the fork server kills what it forked. It runs in a session of its own, so a terminal's
  Ctrl-C reaches the harness, which then stops its servers as it always does.
- Its socket is named in this process's environment (`MCP_CONFORMANCE_FORKSERVER`), which every server,
  launcher, controller and `-j` worker the harness starts inherits. A process that finds the variable
  set (a `-j` worker, or the tests' own fork server) uses that one and starts none.
- Where forking cannot work (not Linux, no `pidfd_open` or `send_fds`), nothing is started and each
  spawner execs `python -m MODULE ARGS` itself: the same server, started the slow way.

The core never imports the fork server's module: it only runs it, as it runs any server command.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

#: The environment variable naming the fork server's socket (read by the spawners).
VARIABLE = "MCP_CONFORMANCE_FORKSERVER"


def supported() -> bool:
    """Whether this platform can hand pipes to a forked process (Linux with pidfd and SCM_RIGHTS)."""
    return sys.platform.startswith("linux") and hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")


def spawn_command(forkserver: str, module: str, *args: str) -> list[str]:
    """The argv that starts `python -m module args` through `forkserver`'s spawner."""
    return [sys.executable, "-m", forkserver, "spawn", module, *args]


class ForkServer:
    """One fork server of one module, started on first use and gone with this process."""

    def __init__(self, module: str, cwd: str | None = None) -> None:
        self.module = module
        self._cwd = cwd
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self.path = ""

    def ensure(self) -> None:
        """Start the fork server unless one is named in the environment already; name it there."""
        with self._lock:
            if self._proc is not None or os.environ.get(VARIABLE) or not supported():
                return
            folder = tempfile.mkdtemp(prefix="mcp-conformance-forkserver-")
            path = os.path.join(folder, "socket")
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            try:
                listener.bind(path)
                listener.listen(128)  # connectable from here on: spawners queue while the server imports
                self._proc = subprocess.Popen(
                    [sys.executable, "-m", self.module, "serve", str(listener.fileno())],
                    cwd=self._cwd,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    pass_fds=[listener.fileno()],
                    start_new_session=True,
                )
            except OSError:  # no fork server: every spawner starts its module directly
                shutil.rmtree(folder, ignore_errors=True)
                return
            finally:
                listener.close()
            self.path = path
            os.environ[VARIABLE] = path

    def stop(self) -> None:
        """Close the fork server's stdin (it kills its children and exits) and remove its socket."""
        with self._lock:
            proc, self._proc = self._proc, None
            if proc is None:
                return
            if os.environ.get(VARIABLE) == self.path:
                del os.environ[VARIABLE]
            assert proc.stdin is not None
            with contextlib.suppress(OSError):
                proc.stdin.close()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
            shutil.rmtree(os.path.dirname(self.path), ignore_errors=True)


_SERVERS: dict[str, ForkServer] = {}
_SERVERS_LOCK = threading.Lock()


def server(module: str) -> ForkServer:
    """This process's one fork server of `module` (not started until `ensure`)."""
    with _SERVERS_LOCK:
        found = _SERVERS.get(module)
        if found is None:
            found = _SERVERS[module] = ForkServer(module)
            if len(_SERVERS) == 1:
                atexit.register(stop_all)
    return found


def ensure(module: str) -> None:
    """Have a fork server of `module` running for this process (see the module's docstring)."""
    server(module).ensure()


def stop_all() -> None:
    """Stop every fork server this process started (at exit; the tests call it too)."""
    with _SERVERS_LOCK:
        servers = list(_SERVERS.values())
    for server in servers:
        server.stop()
