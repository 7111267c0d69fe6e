"""Compression bombs and codings the harness refuses: the run completes with an ERROR naming the cap or
the refused coding, the harness's peak memory stays under 256 MB, and no server process is left.

Each server is `tests/servers/bomb_server.py MODE`, a real HTTP server on loopback that streams its
bombs (gigabytes decoded, a few megabytes on the wire). The harness runs as a real subprocess, as a
user runs it, under a two-line wrapper that prints its own peak RSS (VmHWM) as it exits.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.base import TransportTooLarge
from conformance.adapters.decoding import FACTORIES, BodyDecoder, RefusedEncoding, accept_encoding
from conformance.adapters.http import HttpAdapter
from conformance.adapters.transcript import Transcript
from conformance.reporting import model
from tests.conftest import PY, REPO, judged_non_pass
from tests.hostile import PEAK_LIMIT_MB, harness, left_after, process_tag

REVISION = "2025-11-25"
CAP = 16 * 1024 * 1024
#: Checks run against each bomb: tools/list is asked after initialization succeeded.
CHECKS = "list-shape"
#: mode -> what the ERROR must say.
BOMBS = {
    "gzip": f"exceeded the {CAP}-byte cap",
    "gzip-gzip": f"exceeded the {CAP}-byte cap",
    "deflate": f"exceeded the {CAP}-byte cap",
    "sse-gzip": f"exceeded the {CAP}-byte cap",
    "stacked3": "refused Content-Encoding 'gzip, gzip, gzip'",
    "unknown": "refused Content-Encoding 'compress'",
}


def _harness(mode: str, tmp_path: Path, *server_args: str) -> tuple[int, dict[str, Any], float]:
    """Run the harness on `bomb_server MODE`: (exit code, report.json, peak RSS in MB)."""
    tag = f"bomb-{process_tag(tmp_path)}"
    command = [PY, "-m", "tests.servers.bomb_server", mode, *server_args, "--tag", tag]
    target = tmp_path / "target.toml"
    target.write_text(f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n', encoding="utf-8")
    out = tmp_path / "report"
    args = ["run", "--server", str(target), "--protocol", REVISION, "-k", CHECKS, "--timeout", "10"]
    try:
        result, peak_mb = harness(*args, "--quiet", "--report-dir", str(out), timeout=120)
    finally:
        left = left_after(tag, within=5)  # the harness kills its server on close
    assert not left, f"{mode}: server processes left behind: {left}"
    model.load(out)  # readable: valid against the schema and read back by the typed model
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return result.returncode, report, peak_mb


@pytest.mark.parametrize("only", ["", "tools/list"], ids=["on-initialize", "after-initialize"])
@pytest.mark.parametrize("mode", sorted(BOMBS))
def test_a_bomb_is_an_error_naming_the_cap_within_bounded_memory(
    mode: str, only: str, tmp_path: Path
) -> None:
    code, report, peak_mb = _harness(mode, tmp_path, *(["--only", only] if only else []))
    print(f"{mode} {only or 'initialize'}: peak {peak_mb:.0f} MB")  # shown with -s
    assert code in (1, 3), f"{mode}: exit {code}"
    assert report["footer"]["complete"] is True
    assert report["footer"]["exit_code"] == code
    judged = [c for c in report["cases"] if c["verdict"] in ("ERROR", "FAIL")]
    assert judged, f"{mode}: no ERROR or FAIL case"
    expected = BOMBS[mode]
    assert any(expected in c["message"] for c in judged), [c["message"] for c in judged]
    if only:
        # Initialization was untouched: the bomb landed on the case that lists tools, not on connect.
        assert code == 1
        assert any(c["check"] == "base.tools.list-shape" and expected in c["message"] for c in judged)
    else:
        assert code == 3 and report["cases"][0]["check"] == "base.connect"
    assert peak_mb < PEAK_LIMIT_MB, f"{mode}: the harness peaked at {peak_mb:.0f} MB"


def test_after_init_mode_is_the_gzip_bomb_on_tools_list(tmp_path: Path) -> None:
    code, report, peak_mb = _harness("after-init", tmp_path)
    assert code == 1
    case = next(c for c in report["cases"] if c["check"] == "base.tools.list-shape")
    assert case["verdict"] == "ERROR" and f"exceeded the {CAP}-byte cap" in case["message"]
    assert "Content-Encoding gzip" in case["message"]
    assert peak_mb < PEAK_LIMIT_MB


def test_an_honestly_compressed_server_passes(tmp_path: Path) -> None:
    """gzip JSON answers and a gzipped SSE answer to tools/list are decoded and judged as usual."""
    code, report, peak_mb = _harness("honest-gzip", tmp_path)
    assert code == 0, [(c["check"], c["message"]) for c in report["cases"] if c["verdict"] != "PASS"]
    assert judged_non_pass(report) == set()  # the SKIPs of what the raw server does not offer aside
    assert peak_mb < PEAK_LIMIT_MB


def test_the_harness_asks_only_for_codings_it_decodes(tmp_path: Path) -> None:
    """Accept-Encoding names what the adapters decode, and a gzipped JSON and SSE answer are read whole."""
    tag = f"bomb-{process_tag(tmp_path)}"
    server = subprocess.Popen(
        [PY, "-m", "tests.servers.bomb_server", "honest-gzip", "--tag", tag],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()  # the server prints it once it listens, or exits
        assert line.startswith("LISTENING "), line
        url = line.split()[1]

        async def go() -> tuple[Any, Any]:
            adapter = HttpAdapter(url, Transcript())
            await adapter.start()
            try:
                init = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {"protocolVersion": REVISION, "capabilities": {}, "clientInfo": {"name": "t"}},
                }
                first = await adapter.exchange(json.dumps(init).encode(), expect_id=1, timeout=10)
                listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
                second = await adapter.exchange(json.dumps(listing).encode(), expect_id=2, timeout=10)
                return first, second
            finally:
                await adapter.close()

        first, second = asyncio.run(go())
    finally:
        server.kill()
        server.wait(timeout=10)
    assert first.headers["x-seen-accept-encoding"] == accept_encoding()
    assert first.headers["content-encoding"] == "gzip" and first.response.value["result"]["serverInfo"]
    assert second.content_type == "text/event-stream" and second.headers["content-encoding"] == "gzip"
    assert isinstance(second.response.value["result"]["tools"], list)
    assert "br" not in accept_encoding() or "br" in FACTORIES
    assert "zstd" not in accept_encoding() or "zstd" in FACTORIES


def _decode(coding: str, data: bytes, cap: int | None = CAP, step: int = 1000) -> bytes:
    decoder = BodyDecoder(coding, cap)
    out = bytearray()
    for i in range(0, len(data), step):
        for piece in decoder.feed(data[i : i + step]):
            out += piece
    return bytes(out)


def test_codings_decode_exactly_and_stacked_layers_in_reverse() -> None:
    data = os.urandom(200_000) + b"\0" * 500_000
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    assert _decode("gzip", gzip.compress(data)) == data
    assert _decode("x-gzip", gzip.compress(data[:100]) + gzip.compress(data[100:])) == data  # two members
    assert _decode("deflate", zlib.compress(data)) == data
    assert _decode("deflate", raw.compress(data) + raw.flush()) == data  # raw deflate, no zlib wrapper
    assert _decode("gzip, deflate", zlib.compress(gzip.compress(data))) == data
    assert _decode("identity, gzip", gzip.compress(data)) == data
    assert _decode("", data) == data


def test_one_chunk_never_inflates_past_the_cap() -> None:
    bomb = gzip.compress(b"\0" * (64 << 20))  # 64 MiB in about 64 KB, fed in one chunk
    decoder = BodyDecoder("gzip", 1 << 20)
    seen = 0
    with pytest.raises(TransportTooLarge, match="1048576-byte cap"):
        for piece in decoder.feed(bomb):
            assert len(piece) <= 64 * 1024
            seen += len(piece)
    assert seen <= 1 << 20
    assert decoder.decoded == (1 << 20) + 1


@pytest.mark.parametrize(
    ("header", "why"),
    [
        ("gzip, gzip, gzip", "3 stacked codings"),
        ("compress", "'compress' is not"),
        ("gzip, x-custom", "'x-custom'"),
    ],
)
def test_refused_codings_are_refused_before_decoding(header: str, why: str) -> None:
    with pytest.raises(RefusedEncoding, match=why):
        BodyDecoder(header, CAP)


@pytest.mark.skipif("br" not in FACTORIES, reason="no brotli module with a bounded decoder")
def test_brotli_when_importable() -> None:  # pragma: no cover - only with brotli installed
    import brotli  # type: ignore[import-not-found]

    data = os.urandom(100_000) + b"\0" * 100_000
    assert _decode("br", brotli.compress(data)) == data
    with pytest.raises(TransportTooLarge):
        _decode("br", brotli.compress(b"\0" * (32 << 20)), cap=1 << 20)


@pytest.mark.skipif("zstd" not in FACTORIES, reason="the zstandard module is not importable")
def test_zstd_when_importable() -> None:  # pragma: no cover - only with zstandard installed
    import zstandard  # type: ignore[import-not-found]

    data = os.urandom(100_000) + b"\0" * 100_000
    assert _decode("zstd", zstandard.ZstdCompressor().compress(data)) == data
    with pytest.raises(TransportTooLarge):
        _decode("zstd", zstandard.ZstdCompressor().compress(b"\0" * (32 << 20)), cap=1 << 20)


def test_bytes_after_the_end_of_a_deflate_stream_are_dropped() -> None:
    decoder = BodyDecoder("deflate", CAP)
    out = b"".join(decoder.feed(zlib.compress(b"{}")))
    for _ in range(100):  # a server that keeps sending after the end: nothing kept, nothing counted
        out += b"".join(decoder.feed(b"junk" * 10_000))
    assert out == b"{}" and decoder.decoded == 2
