"""The commands shown in README.md and docs/ci-example.yml are ones the harness accepts, and the target
files shown in README.md, docs/ and the profiles' docstrings are ones it reads, so the docs cannot drift
from the command line and the target-file format they describe."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

from conformance.front import pytest_plugin
from conformance.front.cli import build_parser
from conformance.model.targets import check_target_file

REPO = Path(__file__).resolve().parents[1].parent
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


#: Where target files are shown: Markdown ```toml blocks, and the example in a module's docstring.
TARGET_DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
DOCSTRING_EXAMPLES = [REPO / "conformance_packs" / "dw_discovery" / "locate.py"]


def _toml_blocks(text: str) -> list[str]:
    """The TOML blocks that show a target file (a pack's `pyproject.toml` in ARCHITECTURE.md is not one)."""
    blocks = re.findall(r"^```toml\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    return [b for b in blocks if "[project]" not in b]


def _docstring_tables(text: str) -> list[str]:
    """Indented `[table]` examples in a docstring: from the `[...]` line to the first blank line."""
    return [
        "\n".join(line[4:] for line in block.splitlines())
        for block in re.findall(r"^    \[[a-z-]+\]\n(?:    .*\n)+", text, flags=re.MULTILINE)
    ]


def _documented_target_files() -> list[tuple[str, str]]:
    found = [
        (f"{doc.name} block {n}", b)
        for doc in TARGET_DOCS
        for n, b in enumerate(_toml_blocks(doc.read_text("utf-8")))
    ]
    for source in DOCSTRING_EXAMPLES:
        found += [
            (f"{source.name} example {n}", b)
            for n, b in enumerate(_docstring_tables(source.read_text("utf-8")))
        ]
    return found


def test_the_docs_show_target_files() -> None:
    names = [name for name, _ in _documented_target_files()]
    assert len(names) >= 5, names  # README's [target], the controller, [map], [uwmd], [dw-discovery]
    assert any(name.startswith("locate.py") for name in names)


@pytest.mark.parametrize(("where", "block"), _documented_target_files(), ids=lambda v: str(v)[:40])
def test_every_documented_target_file_is_valid(where: str, block: str) -> None:
    """A block shows a whole file or a profile's table; a table alone gets a [target] to stand in."""
    data = tomllib.loads(block)
    if "targets" not in data:  # a file of many targets ([[targets]]) has no [target]
        data.setdefault("target", {"command": ["python", "-m", "my_server"]})
    check_target_file(data, where)
