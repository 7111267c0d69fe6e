"""`--help`, `list` and `explain` stay light: they never import the MCP SDK (or pydantic, or httpx), and
`list` reads the checks from a cached catalog while the packs' files are unchanged, printing the same
bytes as without it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.conftest import REPO

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
        ["show", "--help"],
        ["--version"],
    ],
)
def test_light_commands_import_nothing_heavy(argv: list[str]) -> None:
    code = (
        "import sys\n"
        "from conformance.front.cli import main\n"
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


# --- the catalog `list` and `explain` read (conformance/front/catalog.py) ----------------------------------

PROBE = """
import sys
from conformance.front.cli import main

code = main({argv!r})
loaded = sorted(m for m in ("hypothesis", "jsonschema", "conformance.engine.runner") if m in sys.modules)
print("IMPORTED", ",".join(loaded) or "-", file=sys.stderr)
sys.exit(code)
"""

EXPLAINED = ("BASE-RPC-002", "base.rpc.id-echo", "CORE-CONNECT-001", "BASE-LOG-004")


def _light(argv: list[str], cache: Path, pythonpath: Sequence[Path] = ()) -> tuple[str, str]:
    """(stdout, what heavy modules the command imported) of `argv` in a fresh interpreter whose cache
    folder is `cache`, with `pythonpath` (a hand-made installed pack) ahead of the repo."""
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(cache),
        "PYTHONPATH": os.pathsep.join([*map(str, pythonpath), str(REPO)]),
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv)], cwd=REPO, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr.strip().splitlines()[-1].removeprefix("IMPORTED ")


def _outputs(cache: Path) -> list[str]:
    return [_light(["list"], cache)[0], *(_light(["explain", what], cache)[0] for what in EXPLAINED)]


def test_list_and_explain_are_the_same_with_the_catalog_cached_built_or_unkept(tmp_path: Path) -> None:
    unwritable = tmp_path / "a-file"
    unwritable.write_text("not a folder", encoding="utf-8")
    without = _outputs(unwritable)  # no cache can be kept there: every command imports the checks
    assert not list(tmp_path.glob("**/catalog-*.json"))
    cache = tmp_path / "cache"
    assert _outputs(cache) == without  # built now
    assert next(p.name for p in (cache / "mcp-conformance").iterdir()).startswith("catalog-")
    assert _outputs(cache) == without  # read from the cache
    assert "base.rpc.id-echo" in without[0] and "MUST be the same as the value of the id" in without[1]


def test_a_current_catalog_spares_list_the_check_modules_and_an_unreadable_one_is_rebuilt(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    first, imported = _light(["list"], cache)
    assert "hypothesis" in imported, "a cold cache imports the checks (the fuzz suite's use hypothesis)"
    again, imported = _light(["list"], cache)
    assert (again, imported) == (first, "-"), "a current catalog is read, no check module imported"
    (path,) = (cache / "mcp-conformance").iterdir()
    for broken in ("{", '{"format": 1}', json.dumps({**json.loads(path.read_text()), "rows": {}}), ""):
        path.write_text(broken, encoding="utf-8")
        rebuilt, imported = _light(["list"], cache)
        assert (rebuilt, "hypothesis" in imported) == (first, True), f"cache {broken[:20]!r} was trusted"
    json.loads(path.read_text(encoding="utf-8"))  # rewritten whole


def test_a_current_catalog_spares_explain_the_requirement_table_too(tmp_path: Path) -> None:
    """explain reads a row a check names from the catalog: no check module, and no requirements.json
    validated against its schema (jsonschema unimported), as for `list`."""
    cache = tmp_path / "cache"
    _light(["list"], cache)  # builds the catalog
    for what in EXPLAINED:
        assert _light(["explain", what], cache)[1] == "-", what


PACK_INIT = """
from conformance.model.packs import Pack

PACK = Pack(name="acme-edit", package=__name__, description="an edited pack", checks=(__name__ + ".checks",))
"""
PACK_CHECKS = """
from conformance.engine.checks import check


@check("acme-edit.ping", "ACME-EDIT-001", {title!r})
async def ping(ctx):
    await ctx.request("ping")
"""
PACK_ROWS = {
    "suite": "acme-edit",
    "requirements": [
        {
            "id": "ACME-EDIT-001",
            "level": "MUST",
            "title": "ping is answered",
            "quote": "The receiver MUST respond promptly with an empty response.",
            "source": "tests/front/test_cli_startup.py",
            "test": "send ping and read that the answer is a result",
        }
    ],
}


def _installed_pack(site: Path) -> Path:
    """A pack installed by hand (its package and a `.dist-info` naming its entry point): the files the
    catalog's key must notice when they change, without a build."""
    package = site / "acme_edit_pack"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(PACK_INIT, encoding="utf-8")
    (package / "checks.py").write_text(PACK_CHECKS.format(title="ping answered"), encoding="utf-8")
    (package / "requirements.json").write_text(json.dumps(PACK_ROWS), encoding="utf-8")
    info = site / "acme_edit_pack-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-edit-pack\nVersion: 1.0\n", "utf-8")
    (info / "entry_points.txt").write_text(
        "[mcp_conformance.suites]\nacme-edit = acme_edit_pack:PACK\n", encoding="utf-8"
    )
    return package


def test_an_edited_pack_is_listed_as_it_now_is(tmp_path: Path) -> None:
    """The catalog is keyed by every file of each pack's package: an edited check title, or a row whose
    level changed, shows at once; the same files give the cached catalog (no check module imported)."""
    site, cache = tmp_path / "site", tmp_path / "cache"
    package = _installed_pack(site)

    def acme() -> tuple[list[str], str]:
        out, imported = _light(["list", "--suite", "acme-edit"], cache, [site])
        return [line.split(None, 4)[1:] for line in out.splitlines()][1], imported

    listed, imported = acme()
    assert (listed, "jsonschema" in imported) == (["ACME-EDIT-001", "MUST", "all", "ping answered"], True)
    assert acme() == (["ACME-EDIT-001", "MUST", "all", "ping answered"], "-")
    (package / "checks.py").write_text(PACK_CHECKS.format(title="ping answered, edited"), encoding="utf-8")
    assert acme()[0][-1] == "ping answered, edited"
    rows = json.loads(json.dumps(PACK_ROWS))
    rows["requirements"][0]["level"] = "SHOULD"
    (package / "requirements.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    assert acme()[0][1] == "SHOULD"
    assert acme() == (["ACME-EDIT-001", "SHOULD", "all", "ping answered, edited"], "-")
