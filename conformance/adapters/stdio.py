"""stdio transport: the target is a child process speaking newline-delimited JSON on stdin/stdout.

The child runs from an argv list (never a shell) in its own process group, so closing kills the whole
group and leaves no orphans. stderr is kept as evidence (a bounded tail), never judged. One message is
capped at `max_message_bytes`: a longer line is discarded as it streams and reported as a garbage frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from conformance.adapters.base import (
    NO_RESPONSE,
    Headers,
    Reply,
    StreamAdapter,
    TargetUnreachable,
    Transcript,
)
from conformance.protocol.jsonrpc import Frame, classify

STDERR_TAIL_BYTES = 8 * 1024
READ_CHUNK = 64 * 1024


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
        env = None
        if self.env is not None:
            env = {**os.environ, **self.env}
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                cwd=self.cwd,
                start_new_session=True,
            )
        except OSError as exc:
            raise TargetUnreachable(f"cannot start {self.argv[0]!r}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise TargetUnreachable(f"cannot start {self.argv[0]!r}: {exc}") from None
        self.transcript.record("event", note=f"started pid {self.proc.pid}: {' '.join(self.argv)}")
        self._tasks = [
            asyncio.create_task(self._read_stdout()),
            asyncio.create_task(self._read_stderr()),
        ]

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
                else:
                    buf += piece
                if nl < 0:
                    break
                start = nl + 1
                if oversize:
                    await self._emit_oversize(oversize)
                    oversize = 0
                else:
                    await self._emit(bytes(buf))
                    buf.clear()
        if oversize:
            await self._emit_oversize(oversize)
        elif buf.strip():
            await self._emit(bytes(buf))
        code = await self._exit_code(wait=2.0)
        self._stream_ended(f"stdout closed (exit status {code})")

    async def _emit(self, line: bytes) -> None:
        line = line.rstrip(b"\r")
        if not line.strip():
            return
        frame = classify(line)
        if frame.kind == "garbage":
            self.garbage_frames += 1
        self.transcript.record("recv", line, channel="stdout")
        await self._frames.put(frame)

    async def _emit_oversize(self, size: int) -> None:
        self.garbage_frames += 1
        note = f"one stdout line of {size} bytes exceeded the {self.max_message_bytes}-byte cap; discarded"
        self.transcript.record("recv", channel="stdout", note=note)
        await self._frames.put(Frame(b"", None, "garbage", note, {"oversize": size}))

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

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None and not self._closed


async def stop_process_group(
    proc: asyncio.subprocess.Process, *, exit_wait: float = 0.5, term_wait: float = 2.0
) -> None:
    """End a child started with `start_new_session=True`, and everything it left in its group.

    Close its stdin, give it `exit_wait` seconds to exit by itself, then SIGTERM the group, then SIGKILL;
    the group is killed at the end in any case, so grandchildren never outlive it. Every wait is bounded.
    """
    if proc.stdin is not None and not proc.stdin.is_closing():
        with contextlib.suppress(Exception):
            proc.stdin.close()
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


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
