"""The reference servers' fork server: the `mcp` SDK and every reference module imported once, each
reference process a fork of that process.

Why: a reference server or controller spends most of a second of CPU importing the `mcp` SDK before it
reads a byte, and the embedded default starts a hundred of them (fresh sessions, each revision's probe,
the controllers); forked from a process that has imported them, one is ready in milliseconds. The
harness still drives a real process over real pipes:

- `python -m conformance_reference.forkserver spawn MODULE ARGS...` is the process the harness starts
  (`Pack.reference_forkserver` names this module; the core's `conformance.infra.prefork` starts the fork
  server and names its socket in the `MCP_CONFORMANCE_FORKSERVER` variable).
  It hands its stdin, stdout and stderr to the fork server (SCM_RIGHTS over a Unix socket), which forks
  a child that runs MODULE as `__main__` on them, with the spawner's environment, directory and ARGS.
  The spawner forwards SIGTERM, SIGINT and SIGHUP to that child and exits as it exits (a signal's death
  as that signal), so closing stdin, signals and exit codes behave as for `python -m MODULE ARGS`.
- When the spawner dies (SIGKILL included) before its child, the fork server kills the child; when the
  process that started the fork server goes (its stdin closes), the fork server kills every child.
- With no fork server to reach (variable unset, socket gone, not Linux), the spawner execs
  `python -m MODULE ARGS`: the same server, started the slow way.

Only for servers whose process handling is not under test: a forked child is not in the spawner's
process group, and its `/proc` environment is the fork server's. The tests start their mutants through
it too (`tests/conftest.py`), but never the servers of the process-handling tests.

    python -m conformance_reference.forkserver spawn MODULE [ARGS...]
    python -m conformance_reference.forkserver serve FD      (started by conformance.infra.prefork)
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import runpy
import selectors
import signal
import socket
import sys
import traceback
from collections.abc import Sequence

#: What every forked server needs imported before the fork: the SDK and the reference servers.
PRELOAD = (
    "mcp.server.lowlevel",
    "mcp.server.stdio",
    "conformance_reference.base_server",
    "conformance_reference.map_server",
    "conformance_reference.map_controller",
    "conformance_reference.uwmd_server",
    "conformance_reference.uwmd_controller",
    "conformance_reference.dw_server",
    "conformance_reference.auth_server",
    "conformance_reference.apps_server",
    "conformance_reference.tasks_server",
)
#: The environment variable naming the fork server's socket.
VARIABLE = "MCP_CONFORMANCE_FORKSERVER"
#: The largest request (module, arguments, environment) a spawner sends; a larger one starts directly.
MAX_REQUEST = 256 * 1024
_FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def supported() -> bool:
    return sys.platform.startswith("linux") and hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")


# --- the spawner: the process the harness starts -------------------------------------------------


def spawn(module: str, args: Sequence[str]) -> int:
    """Run `module` with `args` as a fork of the fork server, or directly when none answers."""
    path = os.environ.get(VARIABLE, "")
    request = json.dumps(
        {"module": module, "args": list(args), "cwd": os.getcwd(), "env": dict(os.environ)}
    ).encode("utf-8")
    reply = b""
    if path and supported() and len(request) <= MAX_REQUEST:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            conn.connect(path)
            socket.send_fds(conn, [request], [0, 1, 2])
            reply = conn.recv(64)
        except OSError:
            reply = b""
    if not reply.startswith(b"started "):  # no fork server answered: start the module the slow way
        os.execv(sys.executable, [sys.executable, "-m", module, *args])
    child = int(reply.split()[1])
    for sig in _FORWARDED:
        signal.signal(sig, lambda signum, _frame: _forward(child, signum))
    _release_stdio()
    try:
        while True:
            try:
                reply = conn.recv(64)
                break
            except InterruptedError:
                continue
    except OSError:
        reply = b""
    if not reply.startswith(b"exit "):  # the fork server died: the child must not outlive us
        _forward(child, signal.SIGKILL)
        return 1
    code = int(reply.split()[1])
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


def _forward(child: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(child, signum)


def _release_stdio() -> None:
    """Point our own 0, 1 and 2 at /dev/null: only the child holds the harness's pipes, so stdout's end
    of file comes when the child exits, as with a server started directly."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


# --- the fork server ------------------------------------------------------------------------------


def serve(listener: socket.socket, preload: Sequence[str]) -> None:
    """Accept spawn requests until stdin closes (the process that started us is gone). A terminal's
    Ctrl-C is the harness's to handle: the harness ends us by closing our stdin."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in preload:
        importlib.import_module(name)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "parent")
    children: dict[int, int] = {}  # pid -> pidfd
    while True:
        for key, _ in selector.select():
            kind = key.data
            if kind == "accept":
                conn, _ = listener.accept()
                selector.register(conn, selectors.EVENT_READ, ("request", conn))
            elif kind == "parent":
                for pid in children:
                    _forward(pid, signal.SIGKILL)
                return
            elif kind[0] == "request":
                conn = kind[1]
                selector.unregister(conn)
                started = _start(conn, selector, listener)
                if started is None:
                    conn.close()
                    continue
                pidfd = os.pidfd_open(started)
                children[started] = pidfd
                selector.register(pidfd, selectors.EVENT_READ, ("exited", started, conn))
                selector.register(conn, selectors.EVENT_READ, ("spawner", started, conn))
            elif kind[0] == "spawner":  # the spawner hung up (killed): so does its child
                selector.unregister(kind[2])
                _forward(kind[1], signal.SIGKILL)
            elif kind[0] == "exited":
                _, pid, conn = kind
                pidfd = children.pop(pid)
                selector.unregister(pidfd)
                os.close(pidfd)
                _, status = os.waitpid(pid, 0)
                with contextlib.suppress(OSError):
                    conn.send(b"exit %d" % os.waitstatus_to_exitcode(status))
                with contextlib.suppress(KeyError, ValueError):
                    selector.unregister(conn)
                conn.close()


def _start(conn: socket.socket, selector: selectors.BaseSelector, listener: socket.socket) -> int | None:
    try:
        data, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, 3)
    except OSError:
        return None
    if len(fds) != 3 or not data:
        for fd in fds:
            os.close(fd)
        return None
    request = json.loads(data)
    pid = os.fork()
    if pid == 0:
        _child(request, fds)
    for fd in fds:
        os.close(fd)
    try:
        conn.send(b"started %d" % pid)
    except OSError:
        _forward(pid, signal.SIGKILL)
    return pid


def _child(request: dict, fds: list[int]) -> None:
    """In the fork: become `python -m MODULE ARGS` on the spawner's pipes; never returns."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(3, 65536)
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8")
        sys.stderr = io.TextIOWrapper(
            io.BufferedWriter(io.FileIO(2, "w", closefd=False)), encoding="utf-8", line_buffering=True
        )
        sys.argv = [request["module"], *request["args"]]
        sys.modules.pop(request["module"], None)  # preloaded as a module; run afresh as __main__
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int | None):
            print(exc.code, file=sys.stderr)
    except KeyboardInterrupt:
        code = 130
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def main(argv: Sequence[str]) -> int:
    if argv[:1] == ["spawn"] and len(argv) >= 2:
        return spawn(argv[1], argv[2:])
    if argv[:1] == ["serve"] and len(argv) == 2:
        serve(socket.socket(fileno=int(argv[1])), PRELOAD)
        return 0
    print("usage: forkserver spawn MODULE [ARGS...] | serve FD", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
