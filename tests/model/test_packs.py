"""The packaging promises, each proved with real installs and real subprocesses.

- Importing the core (and loading the installed packs' declarations) imports no check module of a
  pack, no reference server and none of `mcp`, pydantic or uvicorn.
- A pack from another distribution, installed with pip, is a suite like this repository's own: it is
  listed, its vectors are linted, it runs against a server and its rows reach the report; a pack that
  breaks the rules is refused with exit 2 and one line naming it and what is wrong.
- The core installs (from the checkout, not editable, no extras) into a venv whose `mcp` is 1.x without
  touching it, and both the CLI and the pytest plugin judge an `mcp` 1.x server from there; `run`
  without `--server` says in one line what to install for the reference servers. That venv comes from
  PyPI: it is built once and kept in pytest's cache, and `MCP_CONFORMANCE_NO_OLD_SDK=1` skips it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import venv
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock
from packaging.version import Version

from conformance import schemas
from tests.conftest import REPO

PY = sys.executable
#: The console script of the environment running these tests (the project is installed in it).
SCRIPT = str(Path(PY).parent / "mcp-conformance")
RAW_SERVER = f"stdio:{shlex.join([PY, '-m', 'tests.servers.raw_server'])}"


def _mcp(
    *args: str, pythonpath: Sequence[Path] = (), timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """`mcp-conformance ARGS` from the repo root, with `pythonpath` (installed packs) ahead of the repo."""
    paths = [*map(str, pythonpath), str(REPO)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    return subprocess.run([SCRIPT, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)


# --- 1. the core imports neither a suite nor `mcp` ---------------------------------------------------

IMPORT_PROBE = """
import json, sys

FOREIGN = ("conformance_packs", "conformance_reference", "mcp", "pydantic", "uvicorn")


def foreign():
    return sorted(m for m in sys.modules if m.split(".")[0].startswith(FOREIGN))


import conformance, conformance.front.api, conformance.engine.runner, conformance.reporting.views
import conformance.front.cli, conformance.model.packs, conformance.front.pytest_plugin

before = foreign()
installed = conformance.model.packs.installed()
conformance.front.cli.build_parser()  # what `--help` and the pytest plugin's options cost: declarations only
after = foreign()
print(json.dumps({
    "before": before,
    "after": after,
    "packs": {name: [pack.package, list(pack.checks)] for name, pack in installed.items()},
}))
"""


def test_importing_the_core_imports_no_suite_and_no_mcp(tmp_path: Path) -> None:
    done = subprocess.run([PY, "-c", IMPORT_PROBE], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["before"] == [], "importing the core imported a pack, a reference server or an SDK"
    own = {name: info for name, info in seen["packs"].items() if info[0].startswith("conformance_packs.")}
    assert set(own) == {
        "base",
        "dw-discovery",
        "map-review",
        "uwmd",
        "fuzz",
        "auth",
        "tasks",
        "apps",
        "official-fixture",
        "client",
        "authorization-server",
    }
    check_modules = {module for _, checks in own.values() for module in checks}
    # After `installed()`: the declarations (each pack's __init__) and the fuzz pack's tiny options module.
    allowed = {
        "conformance_packs",
        "conformance_packs.fuzz.options",
        *(package for package, _ in own.values()),
    }
    assert set(seen["after"]) <= allowed, sorted(set(seen["after"]) - allowed)
    assert not set(seen["after"]) & check_modules


# --- 2. a pack from another distribution --------------------------------------------------------------

GOOD_ROW = {
    "id": "EXTGOOD-TOOLS-001",
    "level": "MUST",
    "title": "tools/list is answered with a result",
    "quote": "The server answers a tools/list request with a result.",
    "source": "a pack from another distribution (tests/model/test_packs.py)",
    "test": "send tools/list and read the answer",
}

# What a pack imports from the core: conformance.pack_api, and nothing else (tests/pack_api/test_pack_api.py).
CHECKS = """
from conformance.pack_api import CaseContext, check, missed


@check("{suite}.tools-answered", "{requirement}", "tools/list is answered with a result")
async def tools_answered(ctx: CaseContext) -> None:
    call = await ctx.request("tools/list")
    if not isinstance(call.result, dict):
        missed("tools/list was not answered with a result", **call.excerpt())
"""


def _declaration(suite: str) -> str:
    return textwrap.dedent(f"""
        from conformance.pack_api import Pack

        PACK = Pack(
            name={suite!r},
            package=__name__,
            description="a pack from another distribution",
            checks=(f"{{__name__}}.checks",),
        )
    """)


def _write_distribution(root: Path, suite: str, package: str, files: dict[str, str]) -> Path:
    """A source tree of one distribution declaring `suite` = `package:PACK` in the packs' group."""
    project = root / f"{package}-src"
    (project / package).mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        textwrap.dedent(f"""
            [build-system]
            requires = ["setuptools>=70.1"]
            build-backend = "setuptools.build_meta"

            [project]
            name = "{package.replace("_", "-")}"
            version = "1.0"

            [project.entry-points."mcp_conformance.suites"]
            {suite} = "{package}:PACK"

            [tool.setuptools.packages.find]
            include = ["{package}*"]

            [tool.setuptools.package-data]
            "*" = ["*.json"]
        """),
        encoding="utf-8",
    )
    for name, text in files.items():
        path = project / package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return project


def _requirements(suite: str, *rows: dict[str, Any]) -> str:
    return json.dumps({"suite": suite, "requirements": list(rows)}, indent=2)


def _pack_files(suite: str, *rows: dict[str, Any]) -> dict[str, str]:
    return {
        "__init__.py": _declaration(suite),
        "checks.py": CHECKS.format(suite=suite, requirement=rows[0]["id"]),
        "requirements.json": _requirements(suite, *rows),
    }


#: The packs of this test: (suite, package) -> files. `ext-good` is what a pack should be; each other
#: one breaks one rule.
PACKS: dict[tuple[str, str], dict[str, str]] = {
    ("ext-good", "ext_good_pack"): {
        **_pack_files("ext-good", GOOD_ROW),
        "vectors/requests.json": json.dumps(
            {
                # No schema of its own: the shared envelope is enough for the lint.
                "$schema": "urn:mcp-conformance:vector-file:1",
                "suite": "ext-good",
                "description": "The requests the ext-good pack sends.",
                "vectors": [
                    {"id": "ext-good.tools-list", "requirement": GOOD_ROW["id"], "description": "tools/list"}
                ],
            }
        ),
    },
    # The second row has no `quote`: the requirement schema requires one.
    ("ext-bad-row", "ext_bad_row_pack"): _pack_files(
        "ext-bad-row",
        {**GOOD_ROW, "id": "EXTBAD-ROW-001"},
        {key: value for key, value in GOOD_ROW.items() if key != "quote"} | {"id": "EXTBAD-ROW-002"},
    ),
    ("ext-not-a-pack", "ext_not_a_pack"): {"__init__.py": 'PACK = {"name": "ext-not-a-pack"}\n'},
    # Claims ext-good's requirement ID.
    ("ext-same-id", "ext_same_id_pack"): _pack_files("ext-same-id", GOOD_ROW),
}


@pytest.fixture(scope="module")
def pack_views(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every pack of PACKS installed with one real `pip install --target`, then one folder per pack
    (links to its package and its dist-info), so each test puts exactly the packs it wants on the path."""
    try:
        setuptools = Version(metadata.version("setuptools"))
    except metadata.PackageNotFoundError:
        setuptools = Version("0")
    if setuptools < Version("70.1"):  # no build isolation: the builder is this environment's
        (pytest.fail if os.environ.get("CI") else pytest.skip)(
            "setuptools>=70.1 (the test extra) builds the test packs: pip install -e '.[test]'"
        )
    root = tmp_path_factory.mktemp("packs")
    projects = [_write_distribution(root, suite, package, files) for (suite, package), files in PACKS.items()]
    target = root / "site"
    done = subprocess.run(
        [PY, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-build-isolation",
         "--target", str(target), *map(str, projects)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    views = {}
    for suite, package in PACKS:
        view = root / "views" / suite
        view.mkdir(parents=True)
        for item in [target / package, *target.glob(f"{package}-*.dist-info")]:
            (view / item.name).symlink_to(item)
        assert len(list(view.iterdir())) == 2, f"{package} was not installed with its dist-info"
        views[suite] = view
    return views


def test_a_pack_from_another_distribution_is_listed_and_explained(pack_views: dict[str, Path]) -> None:
    done = _mcp("list", pythonpath=[pack_views["ext-good"]])
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.split()[:2] == ["ext-good.connect", "CORE-CONNECT-001"] for line in lines)
    assert any(line.split()[:3] == ["ext-good.tools-answered", GOOD_ROW["id"], "MUST"] for line in lines)
    assert any(line.startswith("base.") for line in lines), "this repository's packs are still there"
    done = _mcp("explain", GOOD_ROW["id"], pythonpath=[pack_views["ext-good"]])
    assert done.returncode == 0, done.stderr
    assert f"Quote:   {GOOD_ROW['quote']}" in done.stdout
    assert "Checks:  ext-good.tools-answered" in done.stdout


def test_a_pack_from_another_distribution_has_its_vectors_linted(pack_views: dict[str, Path]) -> None:
    from conformance.model.vectors import lint

    own, problems = lint()  # this process has only this repository's packs
    assert problems == []
    done = _mcp("vectors", "lint", "--suite", "ext-good", pythonpath=[pack_views["ext-good"]])
    assert (done.returncode, done.stdout.splitlines()) == (0, ["1 vectors checked, 0 problems"]), done.stderr
    done = _mcp("vectors", "lint", pythonpath=[pack_views["ext-good"]])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == f"{own + 1} vectors checked, 0 problems"


def test_a_pack_from_another_distribution_runs_and_reaches_the_report(
    pack_views: dict[str, Path], tmp_path: Path
) -> None:
    done = _mcp(
        "run", "--server", RAW_SERVER, "--suite", "ext-good", "--quiet", "--report-dir", str(tmp_path),
        pythonpath=[pack_views["ext-good"]],
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert schemas.errors(schemas.REPORT_ID, None, report) == []
    assert report["header"]["suites"] == ["ext-good"]
    revisions = report["targets"][0]["revisions_spoken"]
    assert revisions, "the raw server speaks several revisions"
    ours = [c for c in report["cases"] if c["check"] == "ext-good.tools-answered"]
    assert sorted(c["revision"] for c in ours) == sorted(revisions)
    for case in ours:
        assert case["suite"] == "ext-good"
        assert case["verdict"] == "PASS", case["message"]
        row = {key: case[key] for key in ("requirement", "level", "title")}
        assert row == {"requirement": GOOD_ROW["id"], "level": "MUST", "title": GOOD_ROW["title"]}
    # Only its own cases: the connect case is reported only when a target cannot be judged.
    assert {c["check"] for c in report["cases"]} == {"ext-good.tools-answered"}


def test_without_server_a_pack_without_a_reference_server_is_left_out_unless_named(
    pack_views: dict[str, Path], tmp_path: Path
) -> None:
    """`run` with no --server runs every pack that has a reference server: installing a pack that has
    none does not break it; naming that pack says, in one line, to give --server."""
    done = _mcp(
        "run", "-k", "base.lifecycle.initialize-shape", "--protocol", "2025-11-25", "--quiet",
        "--report-dir", str(tmp_path), pythonpath=[pack_views["ext-good"]],
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert "ext-good" not in report["header"]["suites"]
    assert {c["check"] for c in report["cases"]} == {"base.lifecycle.initialize-shape"}
    done = _mcp("run", "--suite", "ext-good", "--quiet", pythonpath=[pack_views["ext-good"]])
    assert _refused(done) == "mcp-conformance: suite 'ext-good' has no reference server: give --server"


def _refused(done: subprocess.CompletedProcess[str]) -> str:
    """The one stderr line of a refusal (exit 2)."""
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("packs", "named"),
    [
        (["ext-bad-row"], ["'ext-bad-row'", "EXTBAD-ROW-002", "quote"]),
        (
            ["ext-not-a-pack"],
            ["'ext-not-a-pack'", "ext_not_a_pack:PACK", "not a conformance.model.packs.Pack"],
        ),
        (["ext-good", "ext-same-id"], ["'ext-good'", "'ext-same-id'", GOOD_ROW["id"]]),
    ],
    ids=["row-breaks-the-schema", "not-a-pack", "same-requirement-id"],
)
def test_a_broken_pack_is_refused_in_one_line(
    pack_views: dict[str, Path], tmp_path: Path, packs: list[str], named: list[str]
) -> None:
    path = [pack_views[name] for name in packs]
    for args in (
        ["list"],
        ["run", "--server", RAW_SERVER, "--quiet", "--report-dir", str(tmp_path / "report")],
    ):
        line = _refused(_mcp(*args, pythonpath=path))
        assert line.startswith("mcp-conformance: "), line
        for word in named:
            assert word in line, line
    assert not (tmp_path / "report").exists(), "a refused pack runs nothing"


def test_a_broken_pack_leaves_unrelated_pytest_sessions_alone(
    pack_views: dict[str, Path], tmp_path: Path
) -> None:
    """The plugin loads in every pytest session of the environment: a broken pack there must not break a
    session that asks for no conformance run, and one that does gets the pack's one line."""
    (tmp_path / "test_own.py").write_text("def test_own():\n    assert True\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(pack_views["ext-bad-row"]), str(REPO)])}

    def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, str(tmp_path / "test_own.py")],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    own = pytest_run()
    assert own.returncode == 0, own.stdout + own.stderr
    asked = pytest_run("--mcp-server", RAW_SERVER)
    assert asked.returncode == 4, asked.stdout + asked.stderr  # pytest's usage error
    assert "'ext-bad-row'" in asked.stderr and "EXTBAD-ROW-002" in asked.stderr
    assert "Traceback" not in asked.stdout + asked.stderr


# --- 3. `mcp` 1.x beside the core ---------------------------------------------------------------------

#: A current `mcp` 1.x from PyPI, pinned so that a cached venv is rebuilt only when this changes.
MCP_1X = "mcp==1.30.0"
#: A FastMCP server (one tool among others) that runs on whatever `mcp` its Python has.
OLD_SDK_SERVER = REPO / "tests" / "servers" / "old_sdk_server.py"
#: What `pip install <checkout>` must leave out: everything that is not the source of the distribution.
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", ".tox", ".cache", "reports", "build", "*.egg-info", "__pycache__", ".*_cache",
    ".hypothesis", "node_modules",
)  # fmt: skip


def _outside() -> dict[str, str]:
    """The environment of a process of the mcp 1.x venv: nothing of the checkout on its path."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}


def _pip(python: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-m", "pip", *args], env=_outside(), capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def mcp1_venv(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv outside the checkout with `mcp` 1.x and pytest (kept in pytest's cache), into which the core
    is installed from a copy of the checkout, not editable, with no extras, on every session."""
    if os.environ.get("MCP_CONFORMANCE_NO_OLD_SDK"):
        pytest.skip("MCP_CONFORMANCE_NO_OLD_SDK is set: the mcp 1.x venv needs PyPI and a minute or two")
    cache = getattr(request.config, "cache", None)
    home = Path(cache.mkdir("mcp-1x-venv")) if cache is not None else tmp_path_factory.mktemp("mcp-1x-venv")
    where, stamp = home / "venv", home / "ready"
    python = where / "bin" / "python"
    wanted = f"{MCP_1X} pytest; Python {sys.version}"
    with FileLock(str(home / "build.lock")):  # xdist workers share the cache: one builds, the others wait
        if not (python.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == wanted):
            stamp.unlink(missing_ok=True)
            shutil.rmtree(where, ignore_errors=True)
            venv.EnvBuilder(with_pip=True).create(where)
            try:
                done = _pip(python, "install", "--quiet", MCP_1X, "pytest")
            except subprocess.TimeoutExpired:
                pytest.skip(f"pip install {MCP_1X} did not finish within 600 s")
            if done.returncode != 0:
                pytest.skip(f"cannot install {MCP_1X} into a separate venv: {done.stderr.strip()[-300:]}")
            stamp.write_text(wanted, encoding="utf-8")
    _pip(python, "uninstall", "--yes", "--quiet", "mcp-conformance")  # a previous session's copy
    # `pip install <checkout>`, from a copy: a build in the checkout itself would leave build/ there.
    source = tmp_path_factory.mktemp("checkout") / "mcp-conformance"
    shutil.copytree(REPO, source, ignore=NOT_SOURCE)
    done = _pip(python, "install", "--quiet", str(source))
    assert done.returncode == 0, f"the core does not install beside {MCP_1X}: {done.stderr[-2000:]}"
    return where


INSTALLED = """
import conformance, json
from importlib import metadata


def version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


print(json.dumps({"mcp": version("mcp"), "mcp-types": version("mcp-types"), "core": conformance.__file__}))
"""


def _old_sdk_spec(where: Path) -> str:
    return "stdio:" + shlex.join([str(where / "bin" / "python"), str(OLD_SDK_SERVER)])


@pytest.mark.slow
def test_the_core_installs_beside_mcp_1x_and_keeps_it(mcp1_venv: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(mcp1_venv / "bin" / "python"), "-c", INSTALLED],
        cwd=tmp_path, env=_outside(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["mcp"] == MCP_1X.split("==")[1], "installing the core changed the venv's mcp"
    assert seen["mcp-types"] is None, "no extra was installed (the reference extra pins mcp 2)"
    assert Path(seen["core"]).is_relative_to(mcp1_venv), "the core runs from the venv, not the checkout"
    # Every pack's data came with it (requirement rows, vectors, the schemas they declare).
    from conformance.model.vectors import lint

    own, _ = lint()
    for args, last in ((["list"], None), (["vectors", "lint"], f"{own} vectors checked, 0 problems")):
        done = subprocess.run(
            [str(mcp1_venv / "bin" / "mcp-conformance"), *args],
            cwd=tmp_path, env=_outside(), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert (done.returncode, done.stderr) == (0, ""), done.stdout[-2000:] + done.stderr
        assert last is None or done.stdout.splitlines()[-1] == last


@pytest.mark.slow
def test_the_cli_judges_an_mcp_1x_server_from_that_venv(mcp1_venv: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = subprocess.run(
        [str(mcp1_venv / "bin" / "mcp-conformance"), "run", "--server", _old_sdk_spec(mcp1_venv),
         "--quiet", "--report-dir", str(out)],
        cwd=tmp_path, env=_outside(), capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert schemas.errors(schemas.REPORT_ID, None, report) == []
    assert report["footer"]["exit_code"] == done.returncode
    target = report["targets"][0]
    assert target["server_info"]["name"] == "old-sdk-fastmcp"
    assert target["revisions_spoken"], "an mcp 1.x server speaks at least one revision"
    # Its MUST-level misses are the SDK's own, read by hand: mcp 1.x answers an unknown method with
    # -32602, not -32601 (as tests/protocol/test_legacy_revisions.py finds for 1.9; a MUST only where a
    # revision
    # says so), and 1.30's exception handler answers a line that is not JSON with a
    # `notifications/message` ("Internal Server Error") although the server declares no `logging`
    # capability ("Servers that emit log message notifications MUST declare the logging capability"),
    # which is BASE-LOG-004's one verdict in every revision.
    blocking = {c["check"] for c in report["cases"] if c["verdict"] in ("FAIL", "ERROR")}
    assert blocking <= {"base.rpc.method-not-found", "base.logging.capability-declared"}, blocking
    verdicts = {(c["check"], c["revision"]): c["verdict"] for c in report["cases"]}
    for revision in target["revisions_spoken"]:  # judged, not skipped: the tools and the handshake
        for check in (
            "base.lifecycle.initialize-shape",
            "base.tools.list-shape",
            "base.tools.input-schema-valid",
        ):
            assert verdicts[check, revision] == "PASS", (check, revision)


@pytest.mark.slow
def test_the_pytest_plugin_judges_an_mcp_1x_server_from_that_venv(mcp1_venv: Path, tmp_path: Path) -> None:
    (tmp_path / "test_own.py").write_text("def test_implementers_own_test():\n    assert True\n")
    out = tmp_path / "report"
    python = str(mcp1_venv / "bin" / "python")
    done = subprocess.run(
        [python, "-m", "pytest", "-p", "no:cacheprovider", "--mcp-server", _old_sdk_spec(mcp1_venv),
         f"--mcp-report-dir={out}", "-q"],
        cwd=tmp_path, env=_outside(), capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["targets"][0]["server_info"]["name"] == "old-sdk-fastmcp"
    totals = report["footer"]["totals"]
    assert f"mcp-conformance: {totals['cases']} cases:" in done.stdout
    blocking = totals["FAIL"] + totals["ERROR"]
    assert (done.returncode == 1) == (blocking > 0), done.stdout[-3000:]
    # One item per case, plus the implementer's own test.
    outcomes = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|skipped)", done.stdout)}
    assert outcomes.get("failed", 0) == blocking, done.stdout[-3000:]
    assert outcomes.get("skipped", 0) == totals["SKIP"], done.stdout[-3000:]
    assert outcomes.get("passed", 0) == totals["PASS"] + totals["WARN"] + 1, done.stdout[-3000:]
    # The pack's own options reach the plugin there too.
    done = subprocess.run(
        [python, "-m", "pytest", "-p", "no:cacheprovider", "--help"],
        cwd=tmp_path, env=_outside(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "--mcp-fuzz-examples" in done.stdout


# --- 4. `run` without `--server` and without the reference extra -----------------------------------


@pytest.mark.slow
def test_run_without_the_reference_extra_says_what_to_install(mcp1_venv: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(mcp1_venv / "bin" / "mcp-conformance"), "run", "--quiet", "--report-dir", str(tmp_path / "r")],
        cwd=tmp_path, env=_outside(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "pip install 'mcp-conformance[reference]'" in lines[0]
    assert f"(installed: mcp {MCP_1X.split('==')[1]})" in lines[0], "it names the mcp that is in the way"
    assert not (tmp_path / "r").exists()


# --- 4. the pack docs/ARCHITECTURE.md walks a newcomer through --------------------------------------

ARCHITECTURE = REPO / "docs" / "ARCHITECTURE.md"


def _documented_pack() -> dict[str, str]:
    """The files of "Writing a pack", taken from the page itself: each is the code block right after
    the line naming it, so the page cannot drift from a pack that installs and runs."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index("## Writing a pack") :]
    files = {}
    for name in (
        "pyproject.toml",
        "acme_ping/__init__.py",
        "acme_ping/requirements.json",
        "acme_ping/checks.py",
    ):
        after = section[section.index(f"`{name}`") :]
        match = re.search(r"```[a-z]*\n(.*?)^```", after, flags=re.MULTILINE | re.DOTALL)
        assert match, f"ARCHITECTURE.md shows no code block for {name}"
        files[name] = match.group(1)
    return files


def test_the_documented_pack_installs_lists_and_runs(tmp_path: Path) -> None:
    project = tmp_path / "acme-ping"
    for name, text in _documented_pack().items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text, encoding="utf-8")
    site = tmp_path / "site"
    done = subprocess.run(
        [PY, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-build-isolation",
         "--target", str(site), str(project)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    listed = _mcp("list", "--suite", "acme-ping", pythonpath=[site])
    assert listed.returncode == 0, listed.stderr
    rows = [line.split()[:3] for line in listed.stdout.splitlines()]
    assert ["acme-ping.ping.empty-result", "ACME-PING-001", "MUST"] in rows
    done = _mcp(
        "run", "--server", RAW_SERVER, "--suite", "acme-ping", "--quiet", "--report-dir", str(tmp_path / "r"),
        pythonpath=[site],
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "r" / "report.json").read_text(encoding="utf-8"))
    cases = [c for c in report["cases"] if c["check"] == "acme-ping.ping.empty-result"]
    legacy = [r for r in report["targets"][0]["revisions_spoken"] if r != "2026-07-28"]
    assert legacy and sorted(c["revision"] for c in cases) == sorted(legacy)
    assert {(c["verdict"], c["requirement"]) for c in cases} == {("PASS", "ACME-PING-001")}
