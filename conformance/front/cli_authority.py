"""`mcp-conformance auth-server` and `auth-token`: the test authorization server and its tokens, for a
deployment under test to trust (docs/auth.md)."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any

from conformance.infra.authority import TOKEN_KINDS, AuthorityError, AuthorityServer, load_key, mint

COMMANDS = ("auth-server", "auth-token")


def add_parsers(sub: Any) -> None:
    """Add this module's commands to the main parser's subparsers."""
    server = sub.add_parser(
        "auth-server",
        help="serve the test authorization server (metadata, JWKS, code grant, registration) on 127.0.0.1"
        " until Ctrl-C",
    )
    server.add_argument(
        "--key-file", required=True, metavar="FILE", help="its key (a private JWK; created if missing)"
    )
    server.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    server.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default 0)")
    server.add_argument(
        "--scope", action="append", default=[], metavar="S", help="a scope its metadata lists"
    )
    server.add_argument(
        "--path", default="", metavar="PATH", help="its issuer's path, e.g. /oauth (default: none)"
    )
    token = sub.add_parser("auth-token", help="mint a token of the test authorization server and print it")
    token.add_argument("--key-file", required=True, metavar="FILE", help="the server's key (must exist)")
    token.add_argument("--issuer", required=True, metavar="URL", help="the issuer URL the target trusts")
    token.add_argument(
        "--audience", required=True, metavar="URL", help="the MCP server's URL (RFC 8707 resource)"
    )
    token.add_argument("--scope", default="", help="space-separated scopes of the token")
    token.add_argument(
        "--kind", choices=TOKEN_KINDS, default="valid", help="what is wrong with it (default valid)"
    )


def main(args: argparse.Namespace) -> int:
    try:
        if args.command == "auth-server":
            return _serve(args)
        key = load_key(args.key_file, create=False)
        print(mint(key, issuer=args.issuer, audience=args.audience, scope=args.scope, kind=args.kind))
        return 0
    except (AuthorityError, OSError) as exc:
        print(f"mcp-conformance: {exc}", file=sys.stderr)
        return 2


def _serve(args: argparse.Namespace) -> int:
    server = AuthorityServer(
        load_key(args.key_file), host=args.host, port=args.port, scopes=tuple(args.scope), path=args.path
    )
    signal.signal(signal.SIGTERM, _interrupt)  # what CI and process managers send: a clean exit 0
    print(f"LISTENING {server.issuer}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
