"""stdio transport: the target is a child process speaking newline-delimited JSON on stdin/stdout.

The child runs from an argv list (never a shell) in its own process group, so closing kills the whole
group; on Linux, descendants that left the group (`setsid()`) are found by a tag in their environment
and killed too, and the harness is a child subreaper, so it reaps what they leave (`start_tagged`).
stderr is kept as evidence (a bounded tail), never judged. One message is
capped at `max_message_bytes`: a longer line is discarded as it streams and reported as a garbage frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import itertools
import os
import secrets
import signal
import sys
import time
import weakref
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from conformance.adapters.base import (
    NO_RESPONSE,
    Headers,
    Reply,
    StreamAdapter,
    TargetUnreachable,
    cause_in_words,
)
from conformance.adapters.transcript import Transcript
from conformance.protocol.jsonrpc import Frame, classify

STDERR_TAIL_BYTES = 8 * 1024
READ_CHUNK = 64 * 1024
#: Seconds the stdout reader has, once the server has exited, to read what it wrote before: a pipe still
#: open past it is held by a process the server left behind (`StdioAdapter._watch_exit`).
EXIT_GRACE = 1.0


class StdioAdapter(StreamAdapter):
    transport = "stdio"

    def __init__(
        self,
        argv: Sequence[str],
        transcript: Transcript,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        max_message_bytes: int = 16 * 1024 * 1024,
    ) -> None:
        super().__init__(transcript, max_message_bytes=max_message_bytes)
        self.argv = list(argv)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.proc: asyncio.subprocess.Process | None = None
        self._stderr_tail: deque[bytes] = deque()
        self._stderr_size = 0
        self.stderr_bytes = 0
        self.garbage_frames = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = False

    def describe(self) -> str:
        return "stdio:" + " ".join(self.argv)

    async def start(self) -> None:
        try:
            self.proc = await start_tagged(
                self.argv, stdin=asyncio.subprocess.PIPE, env=self.env, cwd=self.cwd
            )
        except OSError as exc:
            raise TargetUnreachable(cause_in_words(exc, program=self.argv[0])) from None
        except ValueError as exc:
            raise TargetUnreachable(f"cannot start {self.argv[0]!r}: {exc}") from None
        self.transcript.record("event", note=f"started pid {self.proc.pid}: {' '.join(self.argv)}")
        reader = asyncio.create_task(self._read_stdout())
        self._tasks = [reader, asyncio.create_task(self._read_stderr())]
        self._tasks.append(asyncio.create_task(self._watch_exit(reader)))

    async def _read_stdout(self) -> None:
        assert self.proc and self.proc.stdout
        stream = self.proc.stdout
        buf = bytearray()
        oversize = 0  # bytes of a too-long line seen so far (its content is not kept)
        while True:
            chunk = await stream.read(READ_CHUNK)
            if not chunk:
                break
            start = 0
            while True:
                nl = chunk.find(b"\n", start)
                piece = chunk[start:] if nl < 0 else chunk[start:nl]
                if oversize:
                    oversize += len(piece)
                elif len(buf) + len(piece) > self.max_message_bytes:
                    oversize = len(buf) + len(piece)
                    buf.clear()
                    # Said now, not at the line's end: a line that never ends (or ends 100 MB later)
                    # must not keep the request it answers waiting; the rest is discarded as it comes.
                    await self._emit_oversize(oversize)
                else:
                    buf += piece
                if nl < 0:
                    break
                start = nl + 1
                if oversize:
                    self.transcript.record(
                        "event", note=f"the stdout line past the cap ended after {oversize} bytes"
                    )
                    oversize = 0
                else:
                    line = bytes(buf)
                    buf.clear()  # before the line is parsed: a message near the cap is not held twice
                    await self._emit(line)
                    del line
        if not oversize and buf.strip():
            await self._emit(bytes(buf))
        code = await self._exit_code(wait=2.0)
        self._stream_ended(f"stdout closed (exit status {code})")

    async def _watch_exit(self, reader: asyncio.Task[None]) -> None:
        """End the stream when the server has exited but its stdout has not: a process it left (in a
        session of its own, say) holds the pipe open, and no answer can come any more. Without this a
        request would wait out its whole timeout for a server that is gone, and again after each restart.
        What the server wrote before it exited is read first (`EXIT_GRACE`)."""
        assert self.proc is not None
        await _exited(self.proc)
        done, _ = await asyncio.wait({reader}, timeout=EXIT_GRACE)
        if done:
            return
        code = self.proc.returncode
        why = f"the server exited (exit status {code}) while a process it left holds its stdout open"
        self.transcript.record("event", note=why)
        self._stream_ended(why)

    async def _emit(self, line: bytes) -> None:
        line = line.rstrip(b"\r")
        if not line.strip():
            return
        frame = classify(line)
        if frame.kind == "garbage":
            self.garbage_frames += 1
        self.transcript.record("recv", line, channel="stdout")
        await self._enqueue(frame)

    async def _emit_oversize(self, size: int) -> None:
        self.garbage_frames += 1
        note = (
            f"one stdout line exceeded the {self.max_message_bytes}-byte cap ({size} bytes read); "
            "discarded to its end"
        )
        self.transcript.record("recv", channel="stdout", note=note)
        await self._enqueue(Frame(b"", None, "garbage", note, {"oversize": size, "partial": True}))

    async def _read_stderr(self) -> None:
        assert self.proc and self.proc.stderr
        while True:
            chunk = await self.proc.stderr.read(READ_CHUNK)
            if not chunk:
                return
            self.stderr_bytes += len(chunk)
            self._stderr_tail.append(chunk)
            self._stderr_size += len(chunk)
            while self._stderr_size > STDERR_TAIL_BYTES and len(self._stderr_tail) > 1:
                self._stderr_size -= len(self._stderr_tail.popleft())

    def stderr_tail(self, limit: int = 2000) -> str:
        data = b"".join(self._stderr_tail)[-limit:]
        return self.transcript.mask(data.decode("utf-8", errors="replace"))

    async def _exit_code(self, wait: float) -> int | None:
        if self.proc is None:
            return None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), wait)
        return self.proc.returncode

    def diagnostics(self) -> str:
        parts = []
        if self.proc is not None and self.proc.returncode is not None:
            parts.append(f"exit status {self.proc.returncode}")
        tail = self.stderr_tail()
        if tail.strip():
            parts.append("stderr tail:\n" + tail.rstrip())
        return "\n".join(parts)

    async def _exchange(self, message: bytes, expect_id: Any, timeout: float, headers: Headers) -> Reply:
        assert self.proc and self.proc.stdin
        started = time.monotonic()
        if b"\n" in message:
            raise ValueError("a stdio message must not contain a newline")
        self.drain_pending()
        self.transcript.record("send", message, channel="stdin")
        try:
            self.proc.stdin.write(message + b"\n")
            if self.proc.stdin.transport.get_write_buffer_size():
                async with asyncio.timeout(timeout):
                    await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the reader reports the exit with its evidence
        except TimeoutError:
            pass  # a child that stopped reading: the wait below times out with evidence
        if expect_id is NO_RESPONSE:
            return Reply(response=None, elapsed=time.monotonic() - started)
        return await self._await_response(expect_id, timeout, started)

    async def close(self) -> None:
        proc = self.proc
        if proc is None or self._closed:
            return
        self._closed = True
        await stop_process_group(proc)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self.transcript.record("event", note=f"closed pid {proc.pid} (exit status {proc.returncode})")

    async def end_input(self, wait: float) -> float | None:
        """Close the child's stdin, as a client starting shutdown does, and wait up to `wait` seconds for
        it to exit by itself: the seconds it took, or None if it is still running (`close` ends it)."""
        proc = self.proc
        if proc is None or proc.stdin is None:
            return None
        started = time.monotonic()
        self.transcript.record("event", note="closed the server's stdin")
        if not proc.stdin.is_closing():
            with contextlib.suppress(Exception):
                proc.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), wait)
        if proc.returncode is None:
            return None
        took = time.monotonic() - started
        self.transcript.record("event", note=f"exit status {proc.returncode} {took:.2f} s after stdin closed")
        return took

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None and not self._closed


#: The environment variable every process the harness starts carries, set to a tag of its own; its
#: descendants inherit it, also after `setsid()`, which is how `stop_process_group` finds them.
TAG_VARIABLE = "MCP_CONFORMANCE_PROCESS_TAG"
_TAGS: weakref.WeakKeyDictionary[asyncio.subprocess.Process, str] = weakref.WeakKeyDictionary()
_SERIAL = itertools.count(1)
PR_SET_CHILD_SUBREAPER = 36
_subreaper: bool | None = None
#: At most this many stray descendants are killed per close (a fork bomb is not chased forever).
MAX_STRAYS = 4096


def become_subreaper() -> bool:
    """Linux: make this process a child subreaper (once), so a target's descendants orphaned by their
    parent's exit, `setsid()` or not, are re-parented here and can be reaped, not to init. Elsewhere
    (macOS, Windows) nothing changes: a target's process group is killed on close, no more."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError, AttributeError):
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _subreaper


async def start_tagged(
    argv: Sequence[str],
    *,
    stdin: int,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    **options: Any,
) -> asyncio.subprocess.Process:
    """Start `argv` (no shell) in a new session with piped stdout and stderr, tagged for `stop_process_group`
    (`options` go to `asyncio.create_subprocess_exec`)."""
    tag = f"{os.getpid()}.{next(_SERIAL)}.{secrets.token_hex(4)}"
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=stdin,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {}), TAG_VARIABLE: tag},
        cwd=cwd,
        start_new_session=True,
        **options,
    )
    _TAGS[proc] = tag
    return proc


class _Stat(NamedTuple):
    ppid: int
    pgrp: int
    session: int
    zombie: bool


def _process_table() -> dict[int, _Stat]:
    """Every process in /proc (Linux) by pid: parent, group, session, and whether it is a zombie."""
    table: dict[int, _Stat] = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    raw = f.read()
            except OSError:
                continue
            fields = raw[raw.rfind(b")") + 2 :].split()
            with contextlib.suppress(IndexError, ValueError):
                table[int(name)] = _Stat(int(fields[1]), int(fields[2]), int(fields[3]), fields[0] == b"Z")
    return table


def _descendants(root: int, table: Mapping[int, _Stat]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, stat in table.items():
        children.setdefault(stat.ppid, []).append(pid)
    found: set[int] = set()
    todo = [root]
    while todo and len(found) < MAX_STRAYS:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _tagged(tag: str, table: Mapping[int, _Stat]) -> set[int]:
    """The live processes whose environment carries `tag` (readable only for this user's processes)."""
    needle = f"{TAG_VARIABLE}={tag}".encode()
    uid = os.getuid()
    found: set[int] = set()
    for pid, stat in table.items():
        if stat.zombie or len(found) >= MAX_STRAYS:
            continue
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.add(pid)
    return found


async def _exited(proc: asyncio.subprocess.Process) -> None:
    """Return once `proc` has exited, also while a process it left holds its pipes open: asyncio's
    `wait()` (3.11) waits for the pipes to close as well, so the exit is watched on a pidfd (Linux);
    elsewhere `wait()` it is."""
    if not hasattr(os, "pidfd_open"):
        await proc.wait()
        return
    await _pidfd_exit(proc.pid, None)


async def _gone(pid: int, wait: float) -> None:
    """Wait (at most `wait` s) for `pid` to exit, on a pidfd where there is one."""
    await _pidfd_exit(pid, wait)


async def _pidfd_exit(pid: int, wait: float | None) -> None:
    """Wait for `pid` to exit on a pidfd, at most `wait` s (None: no bound); at once when there is no
    pidfd to watch (no such call, or the process already exited and was reaped)."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def exited() -> None:
        if not done.done():
            done.set_result(None)

    try:
        loop.add_reader(fd, exited)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done, wait)
    finally:
        loop.remove_reader(fd)
        os.close(fd)


async def end_strays(proc: asyncio.subprocess.Process, family: set[int]) -> None:
    """Kill what is left of a tagged child's descendants, and reap those re-parented to the harness.

    The strays are its descendants seen while it ran (`family`) and every live process carrying its
    tag, `setsid()` or not. Zombies re-parented here (the harness is a subreaper) are reaped when they
    belonged to it: they are strays, or in the group or session of the child or of a stray. Only
    those pids are waited for, so the harness's own children stay asyncio's to reap.
    """
    if proc not in _TAGS or not os.path.isdir("/proc"):
        return
    table = _process_table()
    strays = kill_strays(proc, family, table)
    _TAGS.pop(proc, None)
    me = os.getpid()
    await asyncio.gather(*(_gone(pid, 2.0) for pid in strays))
    groups = {proc.pid} | strays | {table[p].pgrp for p in strays} | {table[p].session for p in strays}
    for pid, stat in _process_table().items():
        if stat.ppid != me or not stat.zombie or pid == proc.pid:
            continue
        if pid in strays or stat.pgrp in groups or stat.session in groups:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)


def kill_strays(
    proc: asyncio.subprocess.Process, family: set[int], table: Mapping[int, _Stat] | None = None
) -> set[int]:
    """SIGKILL a tagged child's strays (its `family` still alive and every live process with its tag),
    waiting for nothing: the pids signalled. Untagged children and systems without /proc have none."""
    tag = _TAGS.get(proc)
    if tag is None or not os.path.isdir("/proc"):
        return set()
    if table is None:
        table = _process_table()
    strays = ({p for p in family if p in table} | _tagged(tag, table)) - {proc.pid, os.getpid()}
    for pid in strays:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return strays


def family_of(proc: asyncio.subprocess.Process) -> set[int]:
    """The live descendants of a tagged child (Linux; empty elsewhere), read before it is stopped."""
    if proc not in _TAGS or proc.returncode is not None or not os.path.isdir("/proc"):
        return set()
    return _descendants(proc.pid, _process_table())


def _close_pipes(proc: asyncio.subprocess.Process) -> None:
    """Close the child's pipes, also one a stray still held open: no transport is left for the garbage
    collector to close after the event loop has (`Event loop is closed`)."""
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        with contextlib.suppress(Exception):
            transport.close()


async def stop_process_group(
    proc: asyncio.subprocess.Process, *, exit_wait: float = 0.5, term_wait: float = 2.0
) -> None:
    """End a child started with `start_new_session=True`, and everything it left in its group.

    Close its stdin, give it `exit_wait` seconds to exit by itself, then SIGTERM the group, then SIGKILL;
    the group is killed at the end in any case, so grandchildren never outlive it. A child started by
    `start_tagged` then has its strays outside the group killed and reaped too (`end_strays`), and its
    pipes are closed. Every wait is bounded.
    """
    family = family_of(proc)
    if proc.stdin is not None and not proc.stdin.is_closing():
        with contextlib.suppress(Exception):
            proc.stdin.close()
    try:
        try:
            await asyncio.wait_for(proc.wait(), exit_wait)
        except TimeoutError:
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), term_wait)
            except TimeoutError:
                _signal_group(proc.pid, signal.SIGKILL)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), 2.0)
        _signal_group(proc.pid, signal.SIGKILL)
        await end_strays(proc, family)
    except BaseException:
        # Cancelled part-way (a case cut by the target's budget while it closed a session, Ctrl-C):
        # nothing is waited for any more, but nothing is left running either.
        _signal_group(proc.pid, signal.SIGKILL)
        kill_strays(proc, family)
        raise
    finally:
        _close_pipes(proc)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
