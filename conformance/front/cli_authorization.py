"""`mcp-conformance authorization`: judge an OAuth 2.1 authorization server as MCP's authorization
pages require it (docs/authorization-server.md), with the same report, views and exit codes as `run`.

Without --url it judges the harness's own test authorization server (`conformance.infra.authority`),
started on loopback with an issuer that has a path, so the path-inserted well-known URIs are judged too.
The report and views are written by the function `cli` hands in (`write_outputs`), so this module
never imports the CLI back.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from conformance.model.verdicts import EXIT_INTERRUPTED
from conformance.protocol.versions import TESTED_REVISIONS

COMMANDS = ("authorization",)
#: The embedded reference's issuer path: a path, so the path-inserted well-known URIs are judged too.
REFERENCE_PATH = "/oauth"


def add_parsers(sub: Any, epilog: str = "") -> None:
    """Add `authorization` to the main parser's subparsers."""
    cmd = sub.add_parser(
        "authorization",
        help="judge an OAuth 2.1 authorization server (default: the harness's test authorization server)",
        epilog=epilog,
    )
    cmd.add_argument("--url", metavar="ISSUER", help="the issuer identifier, exactly as its metadata says it")
    cmd.add_argument(
        "--client-id",
        metavar="ID",
        help="a client registered for the harness (default: it registers one (RFC 7591) or uses a client "
        "ID metadata document, when the server advertises them)",
    )
    cmd.add_argument("--client-secret-env", metavar="VAR", help="environment variable holding its secret")
    cmd.add_argument(
        "--redirect-uri",
        metavar="URL",
        help="the client's registered loopback redirect URI (default http://127.0.0.1/callback); never "
        "listened on: the harness reads the redirect itself",
    )
    cmd.add_argument(
        "--resource", metavar="URI", help="the RFC 8707 resource to ask for (default ISSUER-ORIGIN/mcp)"
    )
    cmd.add_argument("--scope", metavar="S", help="the scope to ask for (space-separated; default none)")
    cmd.add_argument("--protocol", default="auto", choices=("auto", *sorted(TESTED_REVISIONS)))
    cmd.add_argument("-k", dest="select", metavar="EXPR", help="only checks whose ID or requirement ID "
                     "contains one of these comma-separated words")  # fmt: skip
    cmd.add_argument("--timeout", type=float, default=10.0, metavar="S", help="seconds per request (10)")
    cmd.add_argument("--strict", action="store_true", help="a missed SHOULD or implied requirement is a FAIL")
    cmd.add_argument("--report-dir", metavar="DIR", help="write the reports here (default reports/<run-id>/)")
    cmd.add_argument("--quiet", action="store_true", help="no live progress, only the summary")
    cmd.add_argument("-v", "--verbose", action="store_true", help="print every case that did not pass")


def main(args: argparse.Namespace, command: list[str], write_outputs: Callable[..., int]) -> int:
    """Run the packs judging an authorization server against --url (or the embedded reference)."""
    from pathlib import Path

    from conformance.front import api
    from conformance.reporting.progress import Mode, Progress

    if args.timeout <= 0:
        raise ValueError("--timeout must be positive")
    if args.url and urlsplit(args.url).scheme not in ("http", "https"):
        raise ValueError(f"--url must be an http(s) issuer URL, not {args.url!r}")
    secret = _secret(args.client_secret_env)
    settings = {
        key: value
        for key, value in {
            "client_id": args.client_id,
            "client_secret": secret,
            "redirect_uri": args.redirect_uri,
            "resource": args.resource,
            "scope": args.scope,
        }.items()
        if value
    }
    options = api.run_options(timeout=args.timeout, protocol=args.protocol, strict=args.strict)
    mode: Mode = "quiet" if args.quiet else "verbose" if args.verbose else "default"
    header = {"command": command, "options": {"protocol": args.protocol, "timeout": args.timeout,
              "strict": args.strict, "select": args.select or ""}}  # fmt: skip
    with _issuer(args.url) as (issuer, spec):
        from conformance.engine.issuer import IssuerTarget

        target = IssuerTarget(issuer, settings, (secret,) if secret else (), spec)
        report = api.run_issuer_report(
            [target], select=args.select, options=options, header=header, sinks=[Progress(mode=mode)]
        )
    directory = Path(args.report_dir) if args.report_dir else Path("reports") / report["header"]["run_id"]
    stopped = report["footer"].get("reason") == "interrupted"  # Ctrl-C: the partial report, exit 130
    return write_outputs(report, EXIT_INTERRUPTED if stopped else None, directory)


def _secret(variable: str | None) -> str | None:
    if not variable:
        return None
    value = os.environ.get(variable)
    if not value:
        raise ValueError(f"--client-secret-env {variable}: the variable is not set")
    return value


@contextlib.contextmanager
def _issuer(url: str | None) -> Iterator[tuple[str, str]]:
    """The issuer to judge: --url as given, or the test authorization server, started for the run."""
    if url:
        yield url, url
        return
    from conformance.infra.authority import AuthorityServer, new_key

    server = AuthorityServer(new_key(), path=REFERENCE_PATH, scopes=("mcp:tools",))
    server.start()
    try:
        yield server.issuer, f"embedded: the test authorization server ({server.issuer})"
    finally:
        server.shutdown()
        server.server_close()
