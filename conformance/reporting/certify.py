"""Certification bundles: a folder that says which harness judged which server, with what, and how.

A bundle holds the canonical report, `certificate.json` (harness version, sha256 digests of the
report, of the summary, and of every suite and vector file the harness used, the target identity as
the server announced it, the seed, the result) and a readable `SUMMARY.md`. `verify` recomputes every
digest, the suites' and vectors' from the installed harness, and checks that the certificate agrees
with the report (totals, exit code, targets); any edit to the report, the summary, the certificate's
facts, or a harness whose suites differ, is refused.

What this proves, and what not: integrity (a bundle edited after the fact, by accident or casually, or
checked against different suites, fails `verify`), not authenticity (someone who edits the report and
recomputes every digest makes a consistent bundle). Sign the folder (sigstore, GPG) for authenticity.
"""

from __future__ import annotations

import hashlib
import json
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from conformance import __version__
from conformance.model.verdicts import CHECK_VERDICTS, EXIT_OK, Verdict
from conformance.reporting import canonical
from conformance.reporting.model import Report, ReportError

FORMAT = "mcp-conformance-certificate"
FORMAT_VERSION = 1
REPORT, CERTIFICATE, SUMMARY = "report.json", "certificate.json", "SUMMARY.md"
BUNDLE_FILES = frozenset({REPORT, CERTIFICATE, SUMMARY})


class CertifyError(ValueError):
    """The report cannot be certified (incomplete, malformed, from another harness version)."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _files(root: Traversable, prefix: str, skip: str = "") -> dict[str, str]:
    """Digest of every file under `root` (bytecode caches and the folder `skip` excluded), by its path
    below the package, named under `prefix`."""
    out: dict[str, str] = {}
    if not root.is_dir():
        return out
    for entry in sorted(root.iterdir(), key=lambda t: t.name):
        if entry.name in ("__pycache__", skip) or entry.name.endswith((".pyc", ".pyo")):
            continue
        name = f"{prefix}/{entry.name}"
        if entry.is_dir():
            out.update(_files(entry, name))
        else:
            out[name] = sha256(entry.read_bytes())
    return out


def _manifest(files: dict[str, str]) -> dict[str, Any]:
    combined = sha256("".join(f"{path}\0{digest}\n" for path, digest in sorted(files.items())).encode())
    return {"sha256": combined, "files": files}


def material(suites: list[str]) -> dict[str, dict[str, Any]]:
    """Digests of the suites and vectors the installed harness uses for these suites."""
    from conformance.model import packs

    out: dict[str, dict[str, Any]] = {"suites": {}, "vectors": {}}
    for suite in suites:
        if suite not in packs.installed():
            raise CertifyError(f"the report names suite {suite!r}, which this harness does not have")
        root = packs.get(suite).files()
        out["suites"][suite] = _manifest(_files(root, f"suites/{suite}", skip="vectors"))
        out["vectors"][suite] = _manifest(_files(root.joinpath("vectors"), f"vectors/{suite}"))
    return out


def _seed(report: Report) -> Any:
    """The generator seed of the run: an option a pack declares as its seed (`PackOption.seed`: the fuzz
    pack's `--fuzz-seed`), recorded in the header's options under its `dest`."""
    from conformance.model import packs

    options = report.header.options
    declared = [o.dest for pack in packs.installed().values() for o in pack.options if o.seed]
    seed = next((options[dest] for dest in declared if dest in options), options.get("seed"))
    return report.header.extra.get("seed", seed)


def _targets(report: Report) -> list[dict[str, Any]]:
    return [
        {
            "index": t.index,
            "spec": t.spec,
            "transport": t.transport,
            "server_info": dict(t.server_info) if t.server_info is not None else None,
            "revisions_spoken": list(t.revisions_spoken),
        }
        for t in report.targets
    ]


def _result(report: Report) -> dict[str, Any]:
    """The result as recomputed from the cases, so a certificate can never echo an edited footer."""
    return {"complete": report.footer.complete, "exit_code": report.exit_code, "totals": report.counts()}


def summary(report: Report, certificate: dict[str, Any]) -> str:
    from conformance.reporting.views import _md

    result = certificate["result"]
    verdict = (
        "every MUST-level check passed"
        if result["exit_code"] == EXIT_OK
        else f"did not pass (exit code {result['exit_code']})"
    )
    lines = [
        "# MCP conformance certificate",
        "",
        f"- Harness: mcp-conformance {_md(certificate['harness']['version'])}",
        f"- Run: {_md(certificate['run_id'])}, started {_md(report.header.started)}",
        f"- Suites: {_md(', '.join(certificate['suites']))}",
        f"- Seed: {_md(certificate['seed']) if certificate['seed'] is not None else 'none'}",
        f"- Result: {verdict}",
        "",
        "| target | transport | server | revisions spoken |",
        "|---|---|---|---|",
    ]
    for t in certificate["targets"]:
        info = t["server_info"] or {}
        server = f"{info.get('name', '?')} {info.get('version', '')}".strip()
        lines.append(
            f"| {_md(t['spec'])} | {_md(t['transport'])} | {_md(server)} | "
            f"{_md(', '.join(t['revisions_spoken']) or 'none')} |"
        )
    totals = result["totals"]
    shown = [k for k, v in totals.items() if v or k in CHECK_VERDICTS]
    lines += ["", "| " + " | ".join(shown) + " |", "|" + "---|" * len(shown)]
    lines += ["| " + " | ".join(str(totals[k]) for k in shown) + " |", ""]
    problems = [c for c in report.cases if c.verdict != Verdict.PASS]
    if problems:
        lines += ["## Cases that did not pass", "", "| verdict | case | requirement |", "|---|---|---|"]
        lines += [f"| {c.verdict} | {_md(c.key)} | {_md(c.requirement)} |" for c in problems]
        lines.append("")
    lines += ["## Digests (sha256)", "", f"- {REPORT}: `{certificate['report']['sha256']}`"]
    for kind in ("suites", "vectors"):
        for name, manifest in certificate[kind].items():
            lines.append(f"- {kind} {_md(name)}: `{manifest['sha256']}` ({len(manifest['files'])} files)")
    lines += ["", "Check this bundle with `mcp-conformance verify DIR` using the same harness version.", ""]
    return "\n".join(lines)


def certify(report_path: Path, out: Path) -> dict[str, Any]:
    """Write the bundle into `out` (created; refused if it holds other files) and return the certificate."""
    report_bytes = (report_path / REPORT if report_path.is_dir() else report_path).read_bytes()
    try:
        report = Report.from_json(json.loads(report_bytes), source=str(report_path))
    except ReportError as exc:
        raise CertifyError(str(exc)) from None
    version = report.header.harness.version
    if version != __version__:
        raise CertifyError(
            f"the report was made by harness {version}; this is {__version__}: certify with that one"
        )
    if not report.footer.complete:
        raise CertifyError("the run is incomplete: only a complete run can be certified")
    if out.exists() and any(p.name not in BUNDLE_FILES for p in out.iterdir()):
        raise CertifyError(f"{out} holds other files; certify into a new or empty folder")
    suites = list(report.header.suites)
    certificate: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "harness": {"name": "mcp-conformance", "version": __version__},
        "issued": canonical.now_iso(),
        "run_id": report.header.run_id,
        "seed": _seed(report),
        "targets": _targets(report),
        "result": _result(report),
        "report": {"file": REPORT, "sha256": sha256(report_bytes)},
        **material(suites),
    }
    text = summary(report, certificate).encode("utf-8")
    certificate["summary"] = {"file": SUMMARY, "sha256": sha256(text)}
    out.mkdir(parents=True, exist_ok=True)
    (out / REPORT).write_bytes(report_bytes)
    (out / SUMMARY).write_bytes(text)
    canonical.write_json_atomic(out / CERTIFICATE, certificate)
    return certificate


def verify(bundle: Path) -> list[str]:
    """Every reason to refuse the bundle; an empty list means it verifies."""
    try:
        certificate = json.loads((bundle / CERTIFICATE).read_bytes())
    except (OSError, ValueError) as exc:
        return [f"{CERTIFICATE} is missing or unreadable: {exc}"]
    if not isinstance(certificate, dict) or certificate.get("format") != FORMAT:
        return [f"{CERTIFICATE} is not an mcp-conformance certificate"]
    if certificate.get("format_version") != FORMAT_VERSION:
        return [f"certificate format version {certificate.get('format_version')!r} is not {FORMAT_VERSION}"]
    problems: list[str] = []
    extra = sorted(p.name for p in bundle.iterdir() if p.name not in BUNDLE_FILES)
    if extra:
        problems.append(f"files that are not part of a bundle: {', '.join(extra)}")
    version = (certificate.get("harness") or {}).get("version")
    if version != __version__:
        problems.append(
            f"the bundle was made by harness {version}; this is {__version__}: verify with that one"
        )
    for name, key in ((REPORT, "report"), (SUMMARY, "summary")):
        try:
            digest = sha256((bundle / name).read_bytes())
        except OSError:
            problems.append(f"{name} is missing")
            continue
        if digest != (certificate.get(key) or {}).get("sha256"):
            problems.append(f"{name} was changed: its sha256 is {digest}, the certificate says otherwise")
    try:
        data = json.loads((bundle / REPORT).read_bytes())
    except (OSError, ValueError):
        return problems or [f"{REPORT} is unreadable"]
    try:
        report = Report.from_json(data, source=REPORT)
    except ReportError as exc:
        return [*problems, str(exc)]
    if problems:
        return problems
    facts = {
        "run_id": report.header.run_id,
        "seed": _seed(report),
        "targets": _targets(report),
        "result": _result(report),
    }
    for key, value in facts.items():
        if certificate.get(key) != value:
            problems.append(f"the certificate's {key} does not match the report")
    footer = report.footer
    if dict(footer.totals) != facts["result"]["totals"] or footer.exit_code not in (
        facts["result"]["exit_code"],
        None,
    ):
        problems.append("the report's footer does not match its cases (totals or exit code were edited)")
    try:
        current = material(list(report.header.suites))
    except CertifyError as exc:
        return [*problems, str(exc)]
    for kind in ("suites", "vectors"):
        for name, manifest in current[kind].items():
            recorded = (certificate.get(kind) or {}).get(name) or {}
            if recorded.get("sha256") != manifest["sha256"]:
                changed = sorted(
                    path
                    for path in set(manifest["files"]) | set(recorded.get("files") or {})
                    if manifest["files"].get(path) != (recorded.get("files") or {}).get(path)
                )
                problems.append(
                    f"{kind} {name} differ from the installed harness: {', '.join(changed) or '?'}"
                )
    return problems
