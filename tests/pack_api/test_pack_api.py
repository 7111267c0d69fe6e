"""The pack API is the one door from a pack into the core, and the core names no pack.

- Every pack of this repository imports from the core `conformance.pack_api` and nothing else: the
  packs' syntax trees are walked, so a core module added tomorrow is covered without a list to update
  (the import-linter contract in pyproject.toml lists today's modules by name).
- The API's three lists agree: the names `__all__` promises, where each loads from (`_WHERE`), and the
  imports type checkers read; every name resolves, and a pack's declaration (`Pack`) loads cheaply.
- A pack's hooks meet their typed contract (`PrepareHook`, `ReferenceSetupHook`).
- The core's code (not its docstrings and help texts) holds no pack's name, check ID, requirement ID or
  option: what a pack is and does, the pack declares (`Pack.transport_judges`, `PackOption.seed`).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance import pack_api
from conformance.engine.checks import load_pack
from conformance.model import packs
from tests.conftest import REPO

PACKS = REPO / "conformance_packs"
CORE = REPO / "conformance"
API = "conformance.pack_api"


def _core_imports(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, module) of every import of a `conformance` module, `from conformance import x` as
    `conformance.x`, wherever it stands (top level, a function, a TYPE_CHECKING block)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "conformance":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "conformance":
                yield from ((node.lineno, f"conformance.{alias.name}") for alias in node.names)
            elif node.module.startswith("conformance."):
                yield node.lineno, node.module


def _strays(root: Path) -> list[str]:
    return [
        f"{path.relative_to(root)}:{line}: {module}"
        for path in sorted(root.rglob("*.py"))
        for line, module in _core_imports(ast.parse(path.read_text(encoding="utf-8")))
        if module != API
    ]


def test_packs_import_only_the_pack_api() -> None:
    assert _strays(PACKS) == []


def test_the_docs_pack_example_imports_only_the_pack_api() -> None:
    """The "Writing a pack" example of docs/ARCHITECTURE.md is what a newcomer copies."""
    text = (REPO / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text[text.index("## Writing a pack") :]
    blocks = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    assert len(blocks) >= 2, "the declaration and the check module"
    imported = [module for block in blocks for _, module in _core_imports(ast.parse(block))]
    assert imported and set(imported) == {API}, imported


def test_the_walk_finds_every_form_of_a_core_import(tmp_path: Path) -> None:
    """The mutant: a pack module that reaches the core four other ways is caught four times."""
    (tmp_path / "stray.py").write_text(
        "from conformance.pack_api import check\n"
        "from conformance import schemas\n"
        "import conformance.engine.runner\n"
        "def f():\n    from conformance.brand_new_room import thing\n"
        "if True:\n    from conformance.protocol.jsonrpc import Frame\n",
        encoding="utf-8",
    )
    assert [s.split(": ")[1] for s in _strays(tmp_path)] == [
        "conformance.schemas",
        "conformance.engine.runner",
        "conformance.brand_new_room",
        "conformance.protocol.jsonrpc",
    ]


def _typing_imports() -> dict[str, tuple[str, str]]:
    """name -> (module, attribute) of the API's TYPE_CHECKING imports."""
    tree = ast.parse(Path(pack_api.__file__).read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    found: dict[str, tuple[str, str]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names:
            submodule = f"{node.module}.{alias.name}"
            is_module = hasattr(importlib.import_module(node.module), "__path__") and bool(
                importlib.util.find_spec(submodule)
            )
            found[alias.asname or alias.name] = (submodule, "") if is_module else (node.module, alias.name)
    return found


def test_the_api_lists_agree_and_every_name_resolves() -> None:
    assert sorted(pack_api.__all__) == sorted(pack_api._WHERE) == sorted(_typing_imports())
    assert _typing_imports() == pack_api._WHERE
    for name in pack_api.__all__:
        assert getattr(pack_api, name) is not None, name
    with pytest.raises(AttributeError, match="not part of the pack API"):
        _ = pack_api.Runner


def test_a_declaration_loads_without_the_engine() -> None:
    """`from conformance.pack_api import Pack` (every pack's __init__) imports no engine, session or
    transport: listing packs stays as cheap as before the API existed."""
    probe = (
        "import json, sys\nfrom conformance.pack_api import Pack, PackOption\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('conformance'))))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert not [m for m in loaded if m.startswith(("conformance.engine", "conformance.adapters"))], loaded


def test_pack_hooks_meet_their_contract() -> None:
    from conformance_packs.auth import credentials

    prepare: pack_api.PrepareHook = credentials.prepare
    setup: pack_api.ReferenceSetupHook = credentials.reference_setup
    auth = packs.get("auth")
    assert auth.prepare_hook() is prepare and auth.reference_setup_hook() is setup
    assert packs.get("base").prepare_hook() is None


def test_a_transport_judge_must_be_one_of_the_packs_checks() -> None:
    """The base pack declares the judge of HTTP answers; a declaration naming a check the pack does not
    have (or with another requirement) is refused when the pack loads."""
    assert packs.transport_judges() == {"http": ("base.http.request-answer", "BASE-HTTP-005")}
    load_pack("base")  # holds: the check exists with that requirement


def _code_strings(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of the string constants of a module that are code: not docstrings, not argparse
    help texts (which may show an example ID)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            skipped.add(id(body[0].value))
        if isinstance(node, ast.keyword) and node.arg == "help":
            skipped.update(id(n) for n in ast.walk(node.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped:
            yield node.lineno, node.value


def test_the_core_names_no_pack() -> None:
    """No pack's name, check ID, requirement ID or option name is a string in the core's code (the
    sides a pack judges, `packs.SIDES`, are the core's own words, which a pack may be named after)."""
    names = set(packs.installed()) - set(packs.SIDES)
    options = {o.dest for p in packs.installed().values() for o in p.options}
    ids: set[str] = set()
    for name in names:
        for c in load_pack(name):
            if c.requirement.startswith("CORE-"):
                continue
            ids.update((c.id, c.requirement))
    found = [
        f"{path.relative_to(REPO)}:{line}: {text!r}"
        for path in sorted(CORE.rglob("*.py"))
        for line, text in _code_strings(path)
        if text in names | options or any(i in text for i in ids)
    ]
    assert found == []
