"""Content-Encoding decoded by the harness itself, incrementally, every decoded byte counted against the
message cap as it is decoded.

Why not httpx's decoders: they inflate a whole network chunk at once, so a few kilobytes of gzip can
become gigabytes before any cap is looked at (a "compression bomb"). Here each layer inflates at most
`STEP` bytes, and never more than what is left of the budget, before the next is asked for; a stack of
encodings is decoded layer by layer the same way, so no intermediate layer grows either.

Supported: gzip (also x-gzip, several members), deflate (zlib-wrapped, or raw as some servers send
it), brotli when the `brotli` or `brotlicffi` module is importable and can bound its output, zstd when
the `zstandard` module is importable. Anything else, or a stack of more than `MAX_CODINGS`, is refused
before a byte is decoded. `accept_encoding()` names exactly what is supported, so a well-behaved
server is never pushed into a coding the harness would refuse.
"""

from __future__ import annotations

import importlib
import zlib
from collections.abc import Callable, Iterator
from typing import Any

from conformance.adapters.base import TransportError, TransportTooLarge

#: Most decoded bytes one layer produces per step (and so the most one raw chunk adds at once).
STEP = 64 * 1024
#: Input bytes given to the zstd decoder at once (it has no output bound of its own).
ZSTD_SLICE = 32
#: Most codings in one Content-Encoding ("gzip, gzip" is decoded; a third layer is refused).
MAX_CODINGS = 2


class RefusedEncoding(TransportError):
    """The answer's Content-Encoding is one the harness does not decode (unknown, or stacked too deep)."""

    kind = "encoding"


class _Layer:
    """One coding's incremental decoder: `push` compressed bytes, `pull(n)` at most n decoded bytes."""

    def push(self, data: bytes) -> None:
        raise NotImplementedError

    def pull(self, n: int) -> bytes:
        raise NotImplementedError

    def hungry(self) -> bool:
        """True when it holds no undecoded input (pulling more would need more input)."""
        raise NotImplementedError


class _ZlibLayer(_Layer):
    def __init__(self, coding: str) -> None:
        self.coding = coding
        self._gzip = coding in ("gzip", "x-gzip")
        self._wbits = zlib.MAX_WBITS | 16 if self._gzip else zlib.MAX_WBITS
        self._obj = zlib.decompressobj(wbits=self._wbits)
        self._pending = b""
        self._started = False
        self._done = False

    def push(self, data: bytes) -> None:
        if not self._done:  # bytes after the end of the stream are dropped, never kept
            self._pending += data

    def hungry(self) -> bool:
        return not self._pending

    def pull(self, n: int) -> bytes:
        while self._pending and not self._done:
            data, self._pending = self._pending, b""
            try:
                out = self._obj.decompress(data, n)
            except zlib.error as exc:
                if not self._gzip and not self._started and self._wbits > 0:
                    # "deflate" sent as a raw deflate stream, without the zlib wrapper.
                    self._wbits = -zlib.MAX_WBITS
                    self._obj = zlib.decompressobj(wbits=self._wbits)
                    self._pending = data
                    continue
                raise TransportError(
                    f"the body's Content-Encoding {self.coding} does not decode: {exc}"
                ) from None
            self._started = True
            self._pending = self._obj.unconsumed_tail
            if self._obj.eof:
                rest = self._obj.unused_data
                if self._gzip and rest.strip(b"\0"):
                    # Another gzip member follows.
                    self._obj = zlib.decompressobj(wbits=self._wbits)
                    self._pending = rest + self._pending
                else:
                    self._done = True
                    self._pending = b""
            if out:
                return out
        if not self._done and self._started:
            # Output the inflater may still hold from input it already took (a copy cut by `n`).
            return self._obj.decompress(b"", n)
        return b""


class _BrotliLayer(_Layer):
    def __init__(self, module: Any) -> None:
        self._obj = module.Decompressor()
        self._pending = b""

    def push(self, data: bytes) -> None:
        if not self._obj.is_finished():  # bytes after the end of the stream are dropped
            self._pending += data

    def hungry(self) -> bool:
        return not self._pending

    def pull(self, n: int) -> bytes:
        if self._obj.is_finished():
            self._pending = b""
            return b""
        data, self._pending = self._pending, b""
        try:
            out: bytes = self._obj.process(data, output_buffer_limit=n)
            while not out and self._obj.can_accept_more_data() is False:
                out = self._obj.process(b"", output_buffer_limit=n)
        except Exception as exc:  # brotli.error has no common base with brotlicffi's
            raise TransportError(f"the body's Content-Encoding br does not decode: {exc}") from None
        return out


class _ZstdLayer(_Layer):
    """zstd through `zstandard`'s decompressobj, which cannot bound its output: it is fed `ZSTD_SLICE`
    input bytes at a time, and a zstd block (at most 128 KiB decoded) needs at least 4 input bytes, so
    one slice decodes to at most about 1 MiB, kept and handed out `n` bytes at a time."""

    def __init__(self, module: Any) -> None:
        self._module = module
        self._obj = module.ZstdDecompressor().decompressobj()
        self._pending = b""
        self._out = b""

    def push(self, data: bytes) -> None:
        self._pending += data

    def hungry(self) -> bool:
        return not self._pending and not self._out

    def pull(self, n: int) -> bytes:
        while not self._out and self._pending:
            data, self._pending = self._pending[:ZSTD_SLICE], self._pending[ZSTD_SLICE:]
            try:
                self._out = self._obj.decompress(data)
            except self._module.ZstdError as exc:
                raise TransportError(f"the body's Content-Encoding zstd does not decode: {exc}") from None
            if self._obj.eof:
                rest = self._obj.unused_data + self._pending
                self._obj = self._module.ZstdDecompressor().decompressobj()
                self._pending = rest  # another frame may follow
        out, self._out = self._out[:n], self._out[n:]
        return out


def _brotli_module() -> Any:
    for name in ("brotli", "brotlicffi"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        try:  # only a decoder that can bound its output is safe against a bomb
            module.Decompressor().process(b"", output_buffer_limit=1)
        except TypeError:
            continue
        except Exception:
            continue
        return module
    return None


def _zstd_module() -> Any:
    try:
        module = importlib.import_module("zstandard")
    except ImportError:
        return None
    return module if hasattr(module, "ZstdDecompressor") else None


def _factories() -> dict[str, Callable[[], _Layer]]:
    out: dict[str, Callable[[], _Layer]] = {
        "gzip": lambda: _ZlibLayer("gzip"),
        "x-gzip": lambda: _ZlibLayer("x-gzip"),
        "deflate": lambda: _ZlibLayer("deflate"),
    }
    brotli = _brotli_module()
    if brotli is not None:
        out["br"] = lambda: _BrotliLayer(brotli)
    zstd = _zstd_module()
    if zstd is not None:
        out["zstd"] = lambda: _ZstdLayer(zstd)
    return out


FACTORIES = _factories()


def accept_encoding() -> str:
    """The Accept-Encoding header the harness sends: the codings it decodes, nothing else."""
    return ", ".join(c for c in ("gzip", "deflate", "br", "zstd") if c in FACTORIES)


def parse_codings(header: str) -> list[str]:
    """The codings of a Content-Encoding header in the order they were applied (identity dropped)."""
    return [c for c in (part.strip().lower() for part in header.split(",")) if c and c != "identity"]


class BodyDecoder:
    """Raw body bytes in, decoded pieces of at most `STEP` bytes out.

    With a `cap`, at most `cap` decoded bytes in all (TransportTooLarge, naming the cap, past it): the
    cap of one JSON body. Without one (an SSE stream, many messages) the caller bounds each message,
    and each piece is handed over before the next is decoded. With no coding the raw bytes themselves
    are counted. `what` names the body in messages.
    """

    def __init__(self, content_encoding: str, cap: int | None, *, what: str = "an HTTP body") -> None:
        self.codings = parse_codings(content_encoding)
        self.cap = cap
        self.what = what
        self.decoded = 0
        label = ", ".join(self.codings)
        if len(self.codings) > MAX_CODINGS:
            raise RefusedEncoding(
                f"refused Content-Encoding {label!r}: {len(self.codings)} stacked codings "
                f"(the harness decodes at most {MAX_CODINGS})"
            )
        unknown = [c for c in self.codings if c not in FACTORIES]
        if unknown:
            raise RefusedEncoding(
                f"refused Content-Encoding {label!r}: {unknown[0]!r} is not a coding the harness decodes "
                f"(it sends Accept-Encoding: {accept_encoding()})"
            )
        # The last coding applied is the first to undo.
        self._layers = [FACTORIES[c]() for c in reversed(self.codings)]

    def _count(self, size: int) -> None:
        self.decoded += size
        if self.cap is not None and self.decoded > self.cap:
            how = f" (decoded from Content-Encoding {', '.join(self.codings)})" if self.codings else ""
            raise TransportTooLarge(
                f"{self.what} exceeded the {self.cap}-byte cap (max_message_bytes){how}: "
                f"stopped after {self.decoded} bytes"
            )

    def _room(self) -> int:
        return STEP if self.cap is None else max(1, min(STEP, self.cap - self.decoded + 1))

    def feed(self, raw: bytes) -> Iterator[bytes]:
        """Decode `raw` piece by piece; with a cap, never past it (plus one byte, which raises)."""
        if not self._layers:
            self._count(len(raw))
            if raw:
                yield raw
            return
        self._layers[0].push(raw)
        last = len(self._layers) - 1
        while True:
            piece = self._pull(last, self._room())
            if not piece:
                return
            self._count(len(piece))
            yield piece

    def _pull(self, index: int, n: int) -> bytes:
        layer = self._layers[index]
        while True:
            piece = layer.pull(n)
            if piece or index == 0:
                return piece
            if not layer.hungry():
                return b""  # input held but nothing came of it: wait for more raw bytes
            upstream = self._pull(index - 1, STEP)
            if not upstream:
                return b""
            layer.push(upstream)


__all__ = ["MAX_CODINGS", "BodyDecoder", "RefusedEncoding", "accept_encoding", "parse_codings"]
