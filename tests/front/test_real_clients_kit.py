"""The real-client kit (bench/real_clients): its manifest, and the contract its programs share.

Why: the kit's verdicts are only as true as its programs' reading of the official client contract (the
URL or `stdio:` line last, the environment variables) and as its manifest's pins. These run without a
network: the manifest is read, the Python contract module and the JavaScript shell splitter are run on
their own. The SDKs themselves are judged by `python bench/real_clients/run.py --install`, by hand.
"""

from __future__ import annotations

import importlib.util
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO

KIT = REPO / "bench" / "real_clients"


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def contract() -> ModuleType:
    return _load("kit_client_contract", KIT / "clients" / "contract.py")


def test_the_manifest_pins_every_sdk_and_ships_every_program() -> None:
    runner = _load("kit_clients_run", KIT / "run.py")
    manifest = runner.load_manifest()
    assert {c.id for c in manifest.clients} == {"tsv1", "tsv2", "mcp1", "mcp2", "fastmcp"}
    for install in manifest.installs.values():
        assert all(("==" in p) or ("@" in p.lstrip("@")) for p in install.packages), install
        assert all((KIT / file).is_file() for file in install.files)
    assert "tools_call" in manifest.scenarios and "initialize" in manifest.scenarios


def test_the_contract_reads_a_url_or_a_stdio_command_line(contract: ModuleType) -> None:
    env = {"MCP_CONFORMANCE_SCENARIO": "tools_call", "MCP_CONFORMANCE_CONTEXT": '{"toolCalls": []}'}
    http = contract.read_contract(["prog", "http://127.0.0.1:1/mcp"], env)
    assert (http.transport, http.url, http.version, http.modern) == ("http", "http://127.0.0.1:1/mcp",
                                                                    "2025-11-25", False)  # fmt: skip
    line = "stdio:" + shlex.join(["/opt/py thon", "-m", "srv", "--name=it's"])
    env |= {"MCP_CONFORMANCE_PROTOCOL_VERSION": "2026-07-28", "MCP_CONFORMANCE_TRANSPORT": "stdio"}
    piped = contract.read_contract(["prog", line], env)
    assert (piped.transport, piped.command, piped.modern) == ("stdio", ["/opt/py thon", "-m", "srv",
                                                                       "--name=it's"], True)  # fmt: skip
    with pytest.raises(ValueError):
        contract.read_contract(["prog"], env)


def test_tool_arguments_come_from_the_context_else_from_required_properties(contract: ModuleType) -> None:
    properties = {"a": {"type": "number"}, "s": {"type": "string"}, "o": {"type": "object"}}
    tool = {"name": "t", "inputSchema": {"properties": properties, "required": ["a", "s", "o"]}}
    assert contract.arguments_for(tool, {}) == {"a": 1, "s": "x"}
    context = {"toolCalls": [{"name": "t", "arguments": {"a": 2}}]}
    assert contract.arguments_for(tool, context) == {"a": 2}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not on PATH")
def test_the_javascript_splitter_splits_as_the_shell_does() -> None:
    lines = [shlex.join(["/a b/node", "x.mjs", "it's", 'say "hi"', "", "$HOME"]), "plain  words\there"]
    script = (f"import {{ shellSplit }} from {json.dumps((KIT / 'clients' / 'contract.mjs').as_uri())};"
              f"console.log(JSON.stringify({json.dumps(lines)}.map(shellSplit)));")  # fmt: skip
    done = subprocess.run(["node", "--input-type=module", "-e", script], capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    assert json.loads(done.stdout) == [shlex.split(line) for line in lines]


def test_an_official_output_folder_is_read_worst_first_with_the_clients_last_words(tmp_path: Path) -> None:
    runner = _load("kit_clients_run", KIT / "run.py")
    run = tmp_path / "tools_call-1"
    run.mkdir()
    checks = [
        {"id": "a", "status": "SUCCESS"},
        {"id": "b", "status": "WARNING", "description": "maybe"},
        {"id": "c", "status": "FAILURE", "errorMessage": "no call"},
        {"id": "d", "status": "SKIPPED"},
    ]
    (run / "checks.json").write_text(json.dumps(checks), encoding="utf-8")
    (run / "stderr.txt").write_text("Error: gave up\n    at main (x.mjs:1:1)\n", encoding="utf-8")
    verdict = runner._official_verdict(tmp_path)
    assert verdict.verdict == "FAIL"
    assert verdict.checks == [("b", "WARNING", "maybe"), ("c", "FAILURE", "no call"),
                              ("client stderr", "NOTE", "Error: gave up")]  # fmt: skip
    assert runner._official_verdict(tmp_path / "none").verdict == "ERROR"


def test_the_watch_notes_a_tool_list_change_however_the_sdk_wraps_it(contract: ModuleType) -> None:
    """The programs list the tools again after notifications/tools/list_changed: mcp 1.x hands its
    message handler a root model around the notification, mcp 2.x and FastMCP the notification."""
    import asyncio
    from types import SimpleNamespace

    for message in (
        SimpleNamespace(root=SimpleNamespace(method="notifications/tools/list_changed")),
        SimpleNamespace(method="notifications/tools/list_changed"),
    ):
        watch = contract.Watch()
        asyncio.run(watch.handle(SimpleNamespace(method="notifications/progress")))
        assert not watch.tools_changed
        asyncio.run(watch.handle(message))
        assert watch.tools_changed
