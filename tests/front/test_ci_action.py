"""The GitHub Action (action.yml) and the example workflow (docs/ci-example.yml), executed step by step.

No GitHub runner (nor `act`) is available here, so this test is the runner: it reads the YAML, evaluates
the few expressions the files use (`inputs.*`, `env.*`, `github.*`, `steps.*.outputs.*`, `always()`,
`==`, `!=`, `&&`; anything else fails the test), and runs each `run:` script in bash as a runner does
(`bash --noprofile --norc -eo pipefail`, GITHUB_OUTPUT, GITHUB_ENV and GITHUB_STEP_SUMMARY files,
RUNNER_TEMP, the step's `env:`), in order, with a step's `if:` deciding whether it runs after a
failure. `uses:` steps of other actions (checkout, setup-python, upload-artifact, upload-sarif) are
recorded and skipped; the example's `uses:` of this repository's action runs action.yml itself.

The action installs the harness from a clean copy of this checkout (its tracked and new files) into a
virtual environment of its own, once for the module (RUNNER_TEMP is shared, as within one job), and
judges a passing server (the base reference server) and a failing mutant with a few checks each.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import PY, REPO

#: Installs the harness into a venv of its own and runs the action's steps.
pytestmark = pytest.mark.slow

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
EXAMPLE = yaml.safe_load((REPO / "docs" / "ci-example.yml").read_text(encoding="utf-8"))
PLACEHOLDER = "your-org/mcp-conformance@v1"
#: Installed with the reference extra, so it runs from any folder (started directly: a fork of the tests'
#: fork server needs the repository's folder to find it).
PASSING = "stdio:" + shlex.join([PY, "-m", "conformance_reference.base_server"])
#: The failing mutant lives in this checkout's tests/, so a target file (written into each workspace)
#: starts it from here; it is also what makes the SARIF results point at that file.
FAILING = "mcp-target.toml"
_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _scalar(value: Any) -> str:
    """A `with:` or `env:` value as the runner passes it: always a string, booleans as true/false."""
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass
class Step:
    name: str
    ran: bool
    code: int = 0
    uses: str = ""
    with_: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    stdout: str = ""


@dataclass
class Job:
    steps: list[Step]
    outputs: dict[str, str]
    summary: str

    @property
    def failed(self) -> bool:
        return any(s.ran and s.code for s in self.steps)


class Runner:
    """Runs a list of steps the way a GitHub runner does, for the expressions these two files use."""

    def __init__(self, workspace: Path, temp: Path, env: dict[str, str], event: str = "push") -> None:
        self.workspace, self.temp, self.env, self.event = workspace, temp, env, event
        self.summary = workspace.parent / f"{workspace.name}-summary.md"

    def value(self, path: str, ctx: dict[str, Any]) -> str:
        parts = path.split(".")
        if parts[0] == "inputs":
            return str(ctx["inputs"].get(parts[1], ""))
        if parts[0] == "env":
            return ctx["env"].get(parts[1], "")
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            return ctx["steps"].get(parts[1], {}).get(parts[3], "")
        if parts[0] == "github":
            github = {
                "action_path": str(ctx.get("action_path", "")),
                "workspace": str(self.workspace),
                "event_name": self.event,
                "base_ref": "main" if self.event == "pull_request" else "",
                "ref": "refs/heads/main",
            }
            if parts[1] in github:
                return github[parts[1]]
        raise AssertionError(f"an expression this runner does not know: {path}")

    def expand(self, text: str, ctx: dict[str, Any]) -> str:
        return _EXPR.sub(lambda m: self.value(m.group(1), ctx), str(text))

    def condition(self, expr: str, ctx: dict[str, Any], failed: bool) -> bool:
        inner = _EXPR.fullmatch(expr.strip())
        expr = inner.group(1) if inner else expr
        result, status = True, False
        for term in (t.strip() for t in expr.split("&&")):
            if term == "always()":
                status = True
                continue
            m = re.fullmatch(r"([\w.-]+)\s*(==|!=)\s*'([^']*)'", term)
            assert m, f"a condition this runner does not know: {term}"
            left = self.value(m.group(1), ctx)
            result = result and ((left == m.group(3)) == (m.group(2) == "=="))
        return result and (status or not failed)

    def run(self, steps: list[dict[str, Any]], ctx: dict[str, Any]) -> list[Step]:
        done: list[Step] = []
        for i, step in enumerate(steps):
            name = step.get("name") or step.get("uses") or f"step {i}"
            failed = any(s.ran and s.code for s in done)
            # Without `if:` a step runs only while nothing failed (GitHub's implicit success()).
            go = self.condition(str(step["if"]), ctx, failed) if "if" in step else not failed
            if not go:
                done.append(Step(name, ran=False))
                continue
            if "uses" in step:
                with_ = {k: self.expand(_scalar(v), ctx) for k, v in (step.get("with") or {}).items()}
                record = Step(name, ran=True, uses=step["uses"], with_=with_)
                if step["uses"] == PLACEHOLDER:  # this repository's action, as the example names it
                    job = self.action(with_)
                    record.code = int(job.failed)
                    record.outputs = job.outputs
                done.append(record)
            else:
                done.append(self.script(name, step, ctx))
            if "id" in step:
                ctx["steps"][step["id"]] = done[-1].outputs
        return done

    def script(self, name: str, step: dict[str, Any], ctx: dict[str, Any]) -> Step:
        assert "${{" not in step["run"], (
            f"{name}: an expression inside a script is an injection risk; use env"
        )
        output, env_file = self.temp / "output", self.temp / "env"
        output.write_text("")
        env_file.write_text("")
        env = {
            **self.env,
            **ctx["env"],
            **{k: self.expand(_scalar(v), ctx) for k, v in (step.get("env") or {}).items()},
            "GITHUB_OUTPUT": str(output),
            "GITHUB_ENV": str(env_file),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "GITHUB_WORKSPACE": str(self.workspace),
            "RUNNER_TEMP": str(self.temp),
        }
        script = self.temp / "step.sh"
        script.write_text(step["run"], encoding="utf-8")
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=self.workspace, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
        for line in env_file.read_text().splitlines():
            if "=" in line:
                key, val = line.split("=", 1)
                self.env[key] = val
        return Step(name, ran=True, code=done.returncode, outputs=outputs, stdout=done.stdout + done.stderr)

    def action(self, with_: dict[str, str]) -> Job:
        inputs = {k: str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
        unknown = set(with_) - set(inputs)
        assert not unknown, f"inputs the action does not have: {unknown}"
        missing = {k for k, v in ACTION["inputs"].items() if v.get("required") and not with_.get(k)}
        assert not missing, f"required inputs not given: {missing}"
        inputs.update(with_)
        ctx: dict[str, Any] = {
            "inputs": inputs,
            "env": {},
            "steps": {},
            "action_path": self.env["ACTION_PATH"],
        }
        steps = self.run(ACTION["runs"]["steps"], ctx)
        outputs = {k: self.expand(v["value"], ctx) for k, v in ACTION["outputs"].items()}
        return Job(steps, outputs, self.summary.read_text() if self.summary.exists() else "")

    def job(
        self,
        name: str,
        env: dict[str, str],
        replace: dict[str, str],
        inputs: dict[str, dict[str, str]] | None = None,
    ) -> Job:
        """Run a job of the example, the `run:` of the steps named in `replace` replaced (what the
        example asks a user to replace: the install of their server), and the `with:` of the steps
        named in `inputs` given those inputs too (what a user may add: `args` narrowing a run)."""
        steps = copy.deepcopy(EXAMPLE["jobs"][name]["steps"])
        for step in steps:
            if step.get("name") in replace:
                step["run"] = replace[step["name"]]
            if step.get("name") in (inputs or {}):
                step["with"] = {**step["with"], **(inputs or {})[step["name"]]}
        ctx: dict[str, Any] = {"inputs": {}, "env": {**EXAMPLE.get("env", {}), **env}, "steps": {}}
        steps = self.run(steps, ctx)
        return Job(steps, {}, self.summary.read_text() if self.summary.exists() else "")


@pytest.fixture(scope="module")
def runner_temp(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A clean copy of this checkout, as `github.action_path`, and one RUNNER_TEMP for the module."""
    root = tmp_path_factory.mktemp("ci")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    action = root / "action-checkout"
    for name in filter(None, listed.stdout.split("\0")):
        if (REPO / name).is_file():
            (action / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, action / name)
    temp = root / "runner-temp"
    temp.mkdir()
    return {"action": action, "temp": temp, "root": root}


def _runner(paths: dict[str, Path], workspace: str, event: str = "push") -> Runner:
    ws = paths["root"] / workspace
    ws.mkdir(exist_ok=True)
    command = [PY, "-m", "tests.servers.raw_server", "--defect", "schema-violation"]
    (ws / FAILING).write_text(
        f"[target]\ncommand = {json.dumps(command)}\ncwd = {json.dumps(str(REPO))}\n", encoding="utf-8"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the harness runs from its own venv
    env["ACTION_PATH"] = str(paths["action"])
    # The action's own install, without byte-compiling every module of every dependency (pip's default;
    # most are never imported here): the same packages installed, in less time on a busy machine.
    env["PIP_NO_COMPILE"] = "1"
    # `python` is the one the servers are installed in, as after a workflow's setup-python and install.
    env["PATH"] = os.pathsep.join([str(Path(PY).parent), os.environ.get("PATH", "")])
    return Runner(ws, paths["temp"], env, event)


def _in(runner: Runner, path: str) -> Path:
    return runner.workspace / path


def _gate(job: Job) -> Step:
    ran = [s for s in job.steps if s.ran]
    assert ran[-1].name.startswith("Gate"), [s.name for s in ran]
    return ran[-1]


def test_a_passing_server_passes_the_gate_and_gets_its_baseline(runner_temp: dict[str, Path]) -> None:
    runner = _runner(runner_temp, "passing")
    job = runner.action(
        {
            "server": PASSING,
            "baseline": "ci/conformance-baseline.json",
            "args": "-k rpc.id --protocol 2025-11-25",
        }
    )
    out = job.outputs
    assert out["exit-code"] == "0", [s.stdout for s in job.steps if s.ran]
    assert out["baseline-created"] == "true" and out["report"] == "mcp-conformance-report/report.json"
    baseline = json.loads(_in(runner, "ci/conformance-baseline.json").read_text())
    assert baseline["expected_failures"] == []
    badge = json.loads(_in(runner, out["badge"] + "/badge-base.json").read_text())
    assert badge["message"] == "passing"
    sarif = json.loads(_in(runner, out["sarif"]).read_text())
    assert sarif["runs"][0]["results"] == []
    assert "did not exist" in job.summary and "# MCP conformance report" in job.summary
    assert _gate(job).code == 0 and not job.failed
    uploads = {s.uses.split("@")[0]: s for s in job.steps if s.uses}
    assert uploads["actions/upload-artifact"].with_["path"] == "mcp-conformance-report"
    assert uploads["github/codeql-action/upload-sarif"].with_["sarif_file"] == out["sarif"]
    assert not next(s for s in job.steps if s.name == "Set up Python").ran  # python-version not given


def test_a_failing_server_fails_the_gate_last_then_its_baseline_holds(runner_temp: dict[str, Path]) -> None:
    runner = _runner(runner_temp, "failing")
    with_ = {
        "server": FAILING,
        "baseline": "conformance-baseline.json",
        "args": "-k structured --protocol 2025-11-25",
    }
    job = runner.action(with_)
    out = job.outputs
    assert out["exit-code"] == "1" and out["baseline-created"] == "true"
    listed = json.loads(_in(runner, "conformance-baseline.json").read_text())["expected_failures"]
    assert [e["case"] for e in listed] == ["base.call.structured-matches-schema"]
    assert (_in(runner, "mcp-conformance-report") / "conformance-baseline.json").is_file()  # in the artifact
    badge = json.loads(_in(runner, out["badge"] + "/badge-base.json").read_text())
    assert badge["message"] == "1 failing" and badge["color"] == "red"  # written before the gate
    results = json.loads(_in(runner, out["sarif"]).read_text())["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"BASE-CALL-001"}
    # The results point at the target file (without one, at the baseline file).
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} == {FAILING}
    gate = _gate(job)
    assert gate.code == 1 and "::error::" in gate.stdout
    assert [s.name for s in job.steps if s.ran and s.code] == [gate.name]  # only the gate fails
    assert all(s.ran for s in job.steps if s.uses and "upload" in s.uses)  # uploads before the gate

    # The next run finds the baseline: the known failure is XFAIL, the gate passes.
    again = runner.action(with_)
    assert again.outputs["exit-code"] == "0" and again.outputs["baseline-created"] == "false"
    badge = json.loads(_in(runner, again.outputs["badge"] + "/badge-base.json").read_text())
    assert badge["message"] == "passing, 1 known failures"
    results = json.loads(_in(runner, again.outputs["sarif"]).read_text())["runs"][0]["results"]
    assert results and all(r["level"] == "note" and r["suppressions"] for r in results)
    assert _gate(again).code == 0 and not again.failed


def test_the_example_workflow_uses_the_action_and_gates_last(runner_temp: dict[str, Path]) -> None:
    runner = _runner(runner_temp, "example")
    # The test replaces what the example asks a user to replace: the server, and its install.
    steps = EXAMPLE["jobs"]["conformance"]["steps"]
    install = next(s for s in steps if s.get("name") == "Install the server")
    assert install["run"].strip() == "python -m pip install -e ."
    # A stdio spec this time (`env` sets the mutant's import path): no target file, so the SARIF results
    # point at the baseline file, the file a reviewer edits to accept a failure.
    server = "stdio:" + shlex.join(
        ["env", f"PYTHONPATH={REPO}", PY, "-m", "tests.servers.raw_server", "--defect", "schema-violation"]
    )
    # The example's wiring is under test, not the base suite (tests/test_base_*.py judge it): a few
    # checks, as the other tests of the action select, keep the run short. The mutant fails one of them.
    conformance = next(s for s in steps if s.get("uses") == PLACEHOLDER)
    assert "args" not in conformance["with"]
    job = runner.job(
        "conformance",
        {"SERVER": server},
        {install["name"]: ": the test servers are importable"},
        {conformance["name"]: {"args": "-k structured --protocol 2025-11-25"}},
    )
    action = next(s for s in job.steps if s.uses == PLACEHOLDER)
    assert action.ran and action.code == 0 and action.with_["gate"] == "false"
    assert action.with_["suites"] == "base" and action.with_["args"] == "-k structured --protocol 2025-11-25"
    assert action.outputs["exit-code"] == "1" and action.outputs["baseline-created"] == "true"
    assert _in(runner, "conformance-baseline.json").is_file()
    results = json.loads(_in(runner, action.outputs["sarif"]).read_text())["runs"][0]["results"]
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} == {
        "conformance-baseline.json"
    }
    gate = _gate(job)
    assert gate.code == 1 and [s.name for s in job.steps if s.ran and s.code] == [gate.name]
    skipped = {s.name for s in job.steps if not s.ran}
    assert {"What this pull request changed", "Certification bundle for a release"} <= skipped  # a push


def test_the_example_diffs_a_pull_request_with_one_baseline_on_both_sides() -> None:
    step = next(
        s
        for s in EXAMPLE["jobs"]["conformance"]["steps"]
        if s.get("name") == "What this pull request changed"
    )
    script = step["run"]
    assert 'cp "$BASELINE" "$RUNNER_TEMP/baseline.json"' in script
    base_run = re.search(r"mcp-conformance run [^)]*", script)
    assert base_run and '--baseline "$RUNNER_TEMP/baseline.json"' in base_run.group()
    assert 'mcp-conformance diff "$RUNNER_TEMP/base-report" "$REPORTS"' in script
    # The branch's run is the action's, with the same baseline file.
    action = next(s for s in EXAMPLE["jobs"]["conformance"]["steps"] if s.get("uses") == PLACEHOLDER)
    assert action["with"]["baseline"] == "${{ env.BASELINE }}"
    text = (REPO / "docs" / "ci-example.yml").read_text(encoding="utf-8")
    assert "pip install mcp-conformance" not in text
    assert EXAMPLE["permissions"]["security-events"] == "write"
    assert EXAMPLE["jobs"]["conformance"]["steps"][-1]["name"] == "Gate on the verdict"
    assert ACTION["runs"]["steps"][-1]["name"] == "Gate on the exit code"


def test_the_pytest_alternative_needs_no_tests_folder(runner_temp: dict[str, Path]) -> None:
    runner = _runner(runner_temp, "pytest-alternative")
    assert not (runner.workspace / "tests").exists()
    steps = EXAMPLE["jobs"]["pytest-plugin"]["steps"]
    install = next(s for s in steps if "pip install" in s.get("run", ""))
    assert "git+" in install["run"] and PLACEHOLDER.split("@")[0] in install["run"]
    # A short run: PYTEST_ADDOPTS selects a few checks, as `-k` does for the action.
    runner.env["PYTEST_ADDOPTS"] = "--mcp-select structured --mcp-protocol 2025-11-25"
    job = runner.job(
        "pytest-plugin", {"SERVER": FAILING}, {install["name"]: ": installed in the venv of this test"}
    )
    last = [s for s in job.steps if s.ran][-1]
    assert last.code == 1, last.stdout  # the FAIL fails the session
    report = json.loads(_in(runner, "mcp-conformance-report-pytest/report.json").read_text())
    assert {c["requirement"] for c in report["cases"] if c["verdict"] == "FAIL"} == {"BASE-CALL-001"}


def test_every_script_reads_expressions_through_env() -> None:
    for step in [*ACTION["runs"]["steps"], *[s for job in EXAMPLE["jobs"].values() for s in job["steps"]]]:
        if "run" in step:
            assert "${{" not in step["run"], step.get("name")


def test_a_client_is_judged_instead_of_a_server(runner_temp: dict[str, Path]) -> None:
    """`client:` runs `mcp-conformance client --command ...` (`args` narrowing it as for a server): the
    mutant client's FAIL fails the gate last and writes the baseline, which the next run holds; a
    server and a client both given is a usage error (exit code 2, no report)."""
    runner = _runner(runner_temp, "client")
    mutant = shlex.join(
        ["env", f"PYTHONPATH={REPO}", PY, "-m", "tests.servers.client_mutants", "arguments-list"]
    )
    with_ = {
        "client": mutant,
        "baseline": "client-baseline.json",
        "args": "--scenario tools_call --transport http --revision 2025-11-25",
    }
    job = runner.action(with_)
    out = job.outputs
    assert out["exit-code"] == "1" and out["baseline-created"] == "true", [s.stdout for s in job.steps]
    report = json.loads(_in(runner, out["report"]).read_text())
    assert report["header"]["options"]["side"] == "client"
    assert [c["requirement"] for c in report["cases"] if c["verdict"] == "FAIL"] == ["CLIENT-TOOLS-001"]
    listed = json.loads(_in(runner, "client-baseline.json").read_text())["expected_failures"]
    assert [e["case"] for e in listed] == ["client.tools.call"]
    badge = json.loads(_in(runner, out["badge"] + "/badge-client.json").read_text())
    assert badge["message"] == "1 failing"
    results = json.loads(_in(runner, out["sarif"]).read_text())["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"CLIENT-TOOLS-001"}
    assert _gate(job).code == 1 and [s.name for s in job.steps if s.ran and s.code] == [_gate(job).name]

    again = runner.action(with_)
    assert again.outputs["exit-code"] == "0" and again.outputs["baseline-created"] == "false"
    assert _gate(again).code == 0 and not again.failed

    both = runner.action({**with_, "server": PASSING})
    assert both.outputs["exit-code"] == "2" and both.outputs["report"] == ""
    assert _gate(both).code == 1 and "server and client" in _gate(both).stdout
