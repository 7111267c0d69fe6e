"""The authorization suite against the protected reference, its mutants, and a deployment configured the
two ways docs/auth.md shows: trusting the test authorization server, or with a real token.

Every mutant is `tests/servers/auth_mutants.py --defect NAME`, the reference with one planted defect: it
must FAIL (or WARN, for a SHOULD) exactly the rows it breaks, in every revision they exist in, and the
reference must PASS every row. All targets run as one `[[targets]]` file, two worker processes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.infra.authority import TOKEN_KINDS, AuthorityServer, load_key, mint
from tests.conftest import cli, server_argv, shared_install, shared_tmp
from tests.servers.auth_mutants import DEFECTS

pytestmark = pytest.mark.slow

ALL = ("2025-06-18", "2025-11-25", "2026-07-28")
LATER = ("2025-11-25", "2026-07-28")

#: defect -> {(check, verdict, revision)} of every case that is not PASS.
EXPECTED: dict[str, set[tuple[str, str, str]]] = {
    "none": set(),
    "any-audience": {("auth.token.audience", "FAIL", r) for r in ALL},
    "accept-expired": {("auth.token.expired", "FAIL", r) for r in ALL},
    "any-issuer": {("auth.token.issuer", "FAIL", r) for r in ALL},
    "any-key": {("auth.token.signature", "FAIL", r) for r in ALL},
    # 2025-06-18 asks for resource_metadata in the challenge; later revisions accept the well-known URI.
    "no-challenge": {("auth.challenge.bearer", "FAIL", r) for r in ALL}
    | {("auth.discovery.header", "FAIL", "2025-06-18")},
    "wrong-resource": {("auth.metadata.resource", "FAIL", r) for r in ALL},
    # Accepting a token in the query string breaks a client's MUST NOT, the server's SHOULD NOT: WARN.
    "query-token": {("auth.token.query", "WARN", r) for r in ALL},
    # The 403 row FAILs; the challenge of a 403 that never came is not judged (blocked by that row).
    "scope-401": {("auth.scope.forbidden", "FAIL", r) for r in ALL}
    | {("auth.scope.challenge", "SKIP", r) for r in LATER},
    # Its metadata lists mcp:tools: a token without it served is the 403 row's FAIL; the 403's challenge
    # is SKIP, blocked by that row.
    "scope-ignored": {("auth.scope.forbidden", "FAIL", r) for r in ALL}
    | {("auth.scope.challenge", "SKIP", r) for r in LATER},
    # A SHOULD: WARN, its message saying what the challenge held, the 403 and its header as evidence.
    "scope-no-error": {("auth.scope.challenge", "WARN", r) for r in LATER},
    # One defect, one FAIL: asking no token is AUTH-401-001's; the rows that judge what a server refuses
    # (bad tokens, too small a scope, a query token) are SKIP blocked by it, and so are the challenge rows.
    "no-token-needed": {("auth.challenge.no-token", "FAIL", r) for r in ALL}
    | {("auth.challenge.bearer", "SKIP", r) for r in ALL}
    | {("auth.discovery.header", "SKIP", "2025-06-18")}
    | {
        (f"auth.token.{k}", "SKIP", r)
        for k in ("malformed", "expired", "audience", "issuer", "signature")
        for r in ALL
    }
    | {("auth.token.query", "SKIP", r) for r in ALL}
    | {("auth.scope.forbidden", "SKIP", r) for r in ALL}
    | {("auth.scope.challenge", "SKIP", r) for r in LATER},
    # The 401 row FAILs; the rows that read the 401's challenge are blocked by it (the metadata is still
    # found at its well-known URI).
    "no-token-403": {("auth.challenge.no-token", "FAIL", r) for r in ALL}
    | {("auth.challenge.bearer", "SKIP", r) for r in ALL}
    | {("auth.discovery.header", "SKIP", "2025-06-18")},
}
#: defect -> {check: the check whose case (same revision) each of its SKIPs is blocked by}.
BLOCKED_BY: dict[str, dict[str, str]] = {
    "scope-401": {"auth.scope.challenge": "auth.scope.forbidden"},
    "scope-ignored": {"auth.scope.challenge": "auth.scope.forbidden"},
    "no-token-needed": {
        **{
            f"auth.token.{k}": "auth.challenge.no-token"
            for k in ("malformed", "expired", "audience", "issuer", "signature", "query")
        },
        "auth.scope.forbidden": "auth.challenge.no-token",
        "auth.scope.challenge": "auth.challenge.no-token",
        "auth.challenge.bearer": "auth.challenge.no-token",
        "auth.discovery.header": "auth.challenge.no-token",
    },
    "no-token-403": {
        "auth.challenge.bearer": "auth.challenge.no-token",
        "auth.discovery.header": "auth.challenge.no-token",
    },
}

JWT = re.compile(r"eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")


def _target_file(folder: Path) -> Path:
    """Every mutant hosts a test authorization server of its own, all with one key: the suite learns
    each target's issuer from its metadata and mints with that key."""
    key = folder / "issuer.key"
    load_key(key)
    entries = [f"[auth]\nkey_file = {json.dumps(str(key))}\n"]
    for defect in DEFECTS:
        command = server_argv("tests.servers.auth_mutants", "--http", "--port", "0")
        command += ["--key-file", str(key), "--defect", defect]
        entries.append(
            f'[[targets]]\ncommand = {json.dumps(command)}\ntransport = "http"\nlabel = "{defect}"\n'
        )
    path = folder / "mutants.toml"
    path.write_text("\n".join(entries), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def mutant_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], Path]:
    folder = tmp_path_factory.mktemp("auth-mutants")
    out = folder / "report"
    result = cli("run", "--suite", "auth", "--server", str(_target_file(folder)), "-j", "2", "--quiet",
                 "--report-dir", str(out), timeout=900)  # fmt: skip
    return result, json.loads((out / "report.json").read_text(encoding="utf-8")), out


def _by_target(report: dict[str, Any]) -> dict[str, set[tuple[str, str, str]]]:
    labels = {t["index"]: t.get("label") or t["spec"] for t in report["targets"]}
    found: dict[str, set[tuple[str, str, str]]] = {label: set() for label in labels.values()}
    for case in report["cases"]:
        if case["verdict"] != "PASS":
            found[labels[case["target"]]].add((case["check"], case["verdict"], case["revision"]))
    return found


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_each_mutant_fails_exactly_its_rows(
    mutant_run: tuple[Any, dict[str, Any], Path], defect: str
) -> None:
    _, report, _ = mutant_run
    assert _by_target(report)[defect] == EXPECTED[defect]
    # Every SKIP of a mutant is one another row's FAIL explains: it names that case (`blocked_by`).
    index = next(t["index"] for t in report["targets"] if (t.get("label") or t["spec"]) == defect)
    for case in report["cases"]:
        if case["target"] == index and case["verdict"] == "SKIP":
            blocker = BLOCKED_BY[defect][case["check"]]
            suffix = f"#{index}" if index else ""
            assert case.get("blocked_by") == f"{blocker}[http@{case['revision']}]{suffix}", case


@pytest.mark.parametrize("defect", sorted(BLOCKED_BY))
def test_a_blocked_row_names_the_row_that_failed(
    mutant_run: tuple[Any, dict[str, Any], Path], defect: str
) -> None:
    _, report, _ = mutant_run
    (index,) = [t["index"] for t in report["targets"] if (t.get("label") or t["spec"]) == defect]
    for case in report["cases"]:
        blocker = BLOCKED_BY[defect].get(case["check"])
        if case["target"] == index and blocker is not None:
            assert case["verdict"] == "SKIP" and case.get("blocked_by"), case["key"]
            assert case["blocked_by"].startswith(blocker + "["), case["blocked_by"]


def test_a_served_token_without_an_announced_scope_says_which_scope(
    mutant_run: tuple[Any, dict[str, Any], Path],
) -> None:
    _, report, _ = mutant_run
    (index,) = [t["index"] for t in report["targets"] if (t.get("label") or t["spec"]) == "scope-ignored"]
    failed = [c for c in report["cases"] if c["target"] == index and c["verdict"] == "FAIL"]
    assert failed and all(
        "announces the scope mcp:tools (named in scopes_supported of its resource metadata" in c["message"]
        for c in failed
    )


def test_a_challenge_without_error_says_so_with_evidence(
    mutant_run: tuple[Any, dict[str, Any], Path],
) -> None:
    _, report, _ = mutant_run
    (index,) = [t["index"] for t in report["targets"] if (t.get("label") or t["spec"]) == "scope-no-error"]
    warned = [c for c in report["cases"] if c["target"] == index and c["verdict"] == "WARN"]
    assert warned
    for case in warned:
        assert 'says no error parameter, not error="insufficient_scope"' in case["message"]
        assert "None" not in case["message"]
        assert case["evidence"]["http_status"] == 403 and "Bearer" in case["evidence"]["www_authenticate"]


def test_every_row_is_judged_on_the_reference(mutant_run: tuple[Any, dict[str, Any], Path]) -> None:
    _, report, _ = mutant_run
    labels = {t["index"]: t.get("label") or t["spec"] for t in report["targets"]}
    judged = {
        c["requirement"] for c in report["cases"] if labels[c["target"]] == "none" and c["verdict"] == "PASS"
    }
    rows = json.loads(Path("conformance_packs/auth/requirements.json").read_text(encoding="utf-8"))[
        "requirements"
    ]
    # Every row but the stdio one is PASSed by the reference over HTTP.
    assert judged == {r["id"] for r in rows} - {"AUTH-TRANSPORT-001"}


def test_no_token_reaches_any_output(
    mutant_run: tuple[subprocess.CompletedProcess[str], dict[str, Any], Path],
) -> None:
    """Dozens of tokens were minted and sent; none may be in the report, a view, or the console."""
    result, _, folder = mutant_run
    texts = [result.stdout, result.stderr]
    texts += [p.read_text(encoding="utf-8", errors="replace") for p in folder.iterdir() if p.is_file()]
    assert len(texts) >= 5
    for text in texts:
        assert not JWT.search(text), JWT.search(text)


def test_the_embedded_default_passes_every_row(tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = cli("run", "--suite", "auth", "--quiet", "--report-dir", str(out), timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert {c["verdict"] for c in report["cases"]} == {"PASS"}
    for path in out.iterdir():
        assert not JWT.search(path.read_text(encoding="utf-8", errors="replace")), path.name


def test_a_stdio_target_is_not_judged_and_says_why(tmp_path: Path) -> None:
    out = tmp_path / "report"
    server = f"stdio:{sys.executable} -m conformance_reference.base_server"
    result = cli(
        "run", "--suite", "auth", "--server", server, "--quiet", "--report-dir", str(out), timeout=300
    )
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    cases = [c for c in report["cases"] if c["check"] == "auth.transport.stdio"]
    assert cases and all(c["verdict"] == "SKIP" and "HTTP" in c["message"] for c in cases)
    assert not [
        c for c in report["cases"] if c["verdict"] in ("PASS", "FAIL") and c["check"] != "auth.connect"
    ]
    assert result.returncode in (0, 1), result.stderr


@pytest.fixture
def own_deployment(tmp_path: Path) -> Any:
    """A user's deployment: the test authorization server run by hand (`auth-server`), and a protected
    server started apart that trusts its issuer."""
    key = tmp_path / "issuer.key"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(Path.cwd()), os.environ.get("PYTHONPATH")])),
    }
    issuer_proc = subprocess.Popen(
        [sys.executable, "-m", "conformance", "auth-server", "--key-file", str(key), "--scope", "mcp:tools"],
        stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    server_proc = None
    try:
        assert issuer_proc.stdout is not None
        issuer = issuer_proc.stdout.readline().split()[1]
        server_proc = subprocess.Popen(
            [sys.executable, "-m", "conformance_reference.auth_server", "--http", "--issuer", issuer],
            stdout=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        assert server_proc.stdout is not None
        url = server_proc.stdout.readline().split()[1]
        yield key, issuer, url
    finally:
        for proc in (server_proc, issuer_proc):
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)


def test_a_deployment_that_trusts_the_test_issuer(own_deployment: Any, tmp_path: Path) -> None:
    key, _, url = own_deployment
    target = tmp_path / "target.toml"
    target.write_text(
        f'[target]\nurl = "{url}"\n[auth]\nkey_file = {json.dumps(str(key))}\n', encoding="utf-8"
    )
    out = tmp_path / "report"
    result = cli(
        "run", "--suite", "auth", "--server", str(target), "--quiet", "--report-dir", str(out), timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert {c["verdict"] for c in report["cases"]} == {"PASS"}
    assert len(report["cases"]) > 40


def test_a_real_token_from_the_environment(own_deployment: Any, tmp_path: Path) -> None:
    """Without the issuer's key only what needs no signature is judged; the rest SKIPs saying why."""
    key, issuer, url = own_deployment
    token = mint(load_key(key, create=False), issuer=issuer, audience=url, scope="mcp:tools")
    target = tmp_path / "target.toml"
    target.write_text(f'[target]\nurl = "{url}"\n[auth]\ntoken_env = "MY_SERVER_TOKEN"\n', encoding="utf-8")
    out = tmp_path / "report"
    os.environ["MY_SERVER_TOKEN"] = token
    try:
        result = cli(
            "run",
            "--suite",
            "auth",
            "--server",
            str(target),
            "--quiet",
            "--report-dir",
            str(out),
            timeout=300,
        )
    finally:
        del os.environ["MY_SERVER_TOKEN"]
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    verdicts = {(c["check"], c["verdict"]) for c in report["cases"]}
    for check in ("auth.token.expired", "auth.token.audience", "auth.token.issuer", "auth.scope.forbidden"):
        assert (check, "SKIP") in verdicts and (check, "PASS") not in verdicts
    for check in ("auth.token.valid", "auth.token.malformed", "auth.token.signature", "auth.token.query"):
        assert (check, "PASS") in verdicts
    for path in [*out.iterdir()]:
        assert token not in path.read_text(encoding="utf-8", errors="replace"), path.name
    assert token not in result.stdout + result.stderr


def test_the_target_file_table_is_checked(tmp_path: Path) -> None:
    target = tmp_path / "target.toml"
    target.write_text('[target]\nurl = "http://127.0.0.1:9/mcp"\n[auth]\nkey_fille = "k"\n', encoding="utf-8")
    result = cli("run", "--suite", "auth", "--server", str(target), "--quiet", timeout=120)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "key_fille" in result.stderr


def test_the_authority_mints_each_kind_as_documented(tmp_path: Path) -> None:
    """Each bad kind differs from a valid token in one claim or the signature, nothing else."""
    from joserfc import jwt
    from joserfc.jwk import KeySet

    key = load_key(tmp_path / "k.json")
    server = AuthorityServer(key)
    keys = KeySet.import_key_set(key.public_jwks())
    tokens = {kind: mint(key, issuer=server.issuer, audience="http://127.0.0.1:1/mcp", scope="a b", kind=kind)
              for kind in TOKEN_KINDS}  # fmt: skip
    server.server_close()
    valid = jwt.decode(tokens["valid"], keys).claims
    assert (
        valid["aud"] == "http://127.0.0.1:1/mcp" and valid["scope"] == "a b" and valid["exp"] > valid["iat"]
    )
    assert jwt.decode(tokens["expired"], keys).claims["exp"] < valid["iat"]
    assert jwt.decode(tokens["wrong-audience"], keys).claims["aud"] != valid["aud"]
    assert jwt.decode(tokens["wrong-issuer"], keys).claims["iss"] != valid["iss"]
    assert "scope" not in jwt.decode(tokens["small-scope"], keys).claims
    with pytest.raises(Exception, match="signature"):
        jwt.decode(tokens["unknown-key"], keys)
    assert tokens["malformed"].count(".") != 2
    assert oct(os.stat(tmp_path / "k.json").st_mode & 0o777) == "0o600"


#: The TypeScript SDK server's packages, pinned (npm installs them into pytest's cache).
TS_PACKAGES = ("@modelcontextprotocol/sdk@1.32.2", "express@5.3.0", "jose@6.2.18", "zod@4.6.7")


@pytest.fixture(scope="module")
def ts_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/servers/ts_auth_server.mjs inside a folder where its packages are installed (ES modules
    resolve imports from the script's own folder), under a file lock shared by xdist workers."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not on PATH: the TypeScript SDK server cannot be installed")
    if os.environ.get("MCP_CONFORMANCE_NO_INSTALL"):
        pytest.skip("MCP_CONFORMANCE_NO_INSTALL is set: the TypeScript SDK server is not installed")
    cache = getattr(request.config, "cache", None)
    name = "npm-ts-auth-" + "-".join(p.rsplit("@", 1)[1] for p in TS_PACKAGES)
    folder = Path(cache.mkdir(name)) if cache is not None else shared_tmp(tmp_path_factory) / name
    with shared_install(folder) as prefix:
        if not (prefix / "node_modules" / "jose").exists():
            done = subprocess.run(
                [
                    "npm",
                    "install",
                    "--silent",
                    "--no-audit",
                    "--no-fund",
                    "--prefix",
                    str(prefix),
                    *TS_PACKAGES,
                ],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0:
                pytest.skip(f"npm could not install {' '.join(TS_PACKAGES)}: {done.stderr.strip()[-300:]}")
        script = prefix / "ts_auth_server.mjs"
        shutil.copyfile(Path(__file__).parents[2] / "servers" / "ts_auth_server.mjs", script)
    return script


@pytest.mark.parametrize("defect", ["", "--no-audience-check"])
def test_a_typescript_sdk_server_with_bearer_auth(
    ts_server: Path, own_deployment: Any, tmp_path: Path, defect: str
) -> None:
    """A server no part of this project's SDK built: the TypeScript SDK's `requireBearerAuth` and
    metadata router, trusting the test issuer. It passes every row it speaks (2025-06-18 and 2025-11-25);
    with its verifier's audience check removed it FAILs exactly AUTH-TOKEN-003."""
    key, issuer, _ = own_deployment
    command = ["node", str(ts_server), issuer, *([defect] if defect else [])]
    target = tmp_path / "ts.toml"
    target.write_text(
        f'[target]\ncommand = {json.dumps(command)}\ntransport = "http"\n'
        f"[auth]\nkey_file = {json.dumps(str(key))}\n",
        encoding="utf-8",
    )
    out = tmp_path / "report"
    result = cli(
        "run", "--suite", "auth", "--server", str(target), "--quiet", "--report-dir", str(out), timeout=300
    )
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["targets"][0]["server_info"]["name"] == "ts-protected"
    assert {"2025-06-18", "2025-11-25"} <= set(report["targets"][0]["revisions_spoken"])
    failed = {(c["check"], c["verdict"]) for c in report["cases"] if c["verdict"] != "PASS"}
    if defect:
        assert result.returncode == 1 and failed == {("auth.token.audience", "FAIL")}
    else:
        assert result.returncode == 0 and not failed, result.stdout
