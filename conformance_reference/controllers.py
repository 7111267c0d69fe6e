"""What the reference fixture controllers share: hook guards, their command line, and serving.

Why apart: the MAP and UW controllers differ only in their hooks. Each opens the same SQLite file as its
server's processes (`--db`), so every hook is seen at once by every stdio racer and by the HTTP server,
and each answers a refusal as a hook error, never with a traceback.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from conformance.fixtures import Controller, HookError
from conformance_reference.sqlite_store import FixtureError

__all__ = ["Hook", "controller_parser", "guarded", "serve_controller"]

JSON = dict[str, Any]
Hook = Callable[[JSON], JSON]


def guarded(known: frozenset[str] | None = None) -> Callable[[Hook], Hook]:
    """A hook whose refusals are hook errors: params outside `known` (when given) `unsupported`, a
    store's `FixtureError` its own code, a missing or mistyped param `invalid_params`."""

    def wrap(func: Hook) -> Hook:
        def run(params: JSON) -> JSON:
            unknown = set(params) - known if known is not None else set()
            if unknown:
                raise HookError("unsupported", f"unknown params: {', '.join(sorted(unknown))}")
            try:
                return func(params)
            except FixtureError as exc:
                raise HookError(exc.code, exc.message) from None
            except (KeyError, TypeError, ValueError) as exc:
                raise HookError("invalid_params", f"{type(exc).__name__}: {exc}") from None

        run.__name__ = func.__name__
        return run

    return wrap


def controller_parser(prog: str, description: str, db_help: str) -> argparse.ArgumentParser:
    """The options every reference controller takes: its store (`--db`) and stdio or loopback HTTP."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--db", required=True, help=db_help)
    parser.add_argument(
        "--http", action="store_true", help="serve POST /fixture on loopback instead of stdio"
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    return parser


def serve_controller(controller: Controller, args: argparse.Namespace) -> int:
    """Serve the hooks as `controller_parser`'s options say; the process exit status."""
    if args.http:
        return controller.serve_http(args.host, args.port)
    return controller.serve_stdio()
