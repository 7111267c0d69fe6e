"""The commands shown in README.md and docs/ci-example.yml are ones the harness accepts, so the docs
cannot drift from the command line they describe."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from conformance import pytest_plugin
from conformance.cli import build_parser

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", REPO / "docs" / "ci-example.yml"]


def _commands(text: str) -> list[str]:
    """`mcp-conformance ...` invocations, continuation lines joined, CI expressions made plain words."""
    text = re.sub(r"\\\n\s*", " ", text)
    text = re.sub(r"\$\{\{[^}]*\}\}|\"\$GITHUB_WORKSPACE[^\"]*\"", "X", text)
    found = []
    for line in text.splitlines():
        at = line.find("mcp-conformance ")
        if at < 0 or line[at - 1 : at] in ("/", "-", "`", "[") or "pip install" in line:
            continue
        command = line[at:].split("#", 1)[0].split(")", 1)[0].split("|", 1)[0].strip().rstrip("`")
        if command.startswith("mcp-conformance ") and re.match(r"mcp-conformance [a-z]", command):
            found.append(command)
    return found


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_documented_command_parses(doc: Path) -> None:
    commands = _commands(doc.read_text(encoding="utf-8"))
    assert len(commands) >= 4
    parser = build_parser()
    for command in commands:
        argv = shlex.split(command)[1:]
        try:
            parser.parse_args(argv)
        except SystemExit as exc:  # argparse exits on an unknown command or option
            pytest.fail(f"{doc.name}: `{command}` is not accepted (exit {exc.code})")


def test_documented_plugin_options_exist() -> None:
    source = Path(pytest_plugin.__file__).read_text(encoding="utf-8")
    for doc in DOCS:
        for option in set(re.findall(r"--mcp-[a-z-]+", doc.read_text(encoding="utf-8"))):
            assert f'"{option}"' in source, f"{doc.name} mentions {option}, which the plugin does not have"
