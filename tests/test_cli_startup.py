"""`--help`, `list` and `explain` stay light: they never import the MCP SDK (or pydantic, or httpx)."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("mcp", "mcp_types", "pydantic", "httpx", "anyio", "joserfc", "cryptography")


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["list"],
        ["explain", "BASE-RPC-002"],
        ["run", "--help"],
        ["diff", "--help"],
        ["baseline", "update", "--help"],
        ["certify", "--help"],
        ["list", "--suite", "auth"],
        ["auth-token", "--help"],
    ],
)
def test_light_commands_import_nothing_heavy(argv: list[str]) -> None:
    code = (
        "import sys\n"
        "from conformance.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stderr.strip().splitlines()[-1] == "[]"


def test_explain_prints_the_quoted_requirement() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "conformance", "explain", "base.rpc.id-echo"], capture_output=True, text=True
    )
    assert result.returncode == 0
    assert "BASE-RPC-002" in result.stdout and "MUST be the same as the value of the id" in result.stdout
