"""The fixture controller of the reference MAP review service, built with the project's helper.

It opens the same SQLite file as the service processes (`--db`), so every hook it runs is seen at once by
every stdio racer and by the HTTP server. It is also the worked example of `conformance.fixtures`: each
hook is a few lines over the service's own store.

    python -m conformance_reference.map_controller --db state.db            # JSON lines on stdin/stdout
    python -m conformance_reference.map_controller --db state.db --http     # POST /fixture on loopback
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from conformance.fixtures import Controller, HookError
from conformance_reference.controllers import controller_parser, guarded, serve_controller
from conformance_reference.map_state import (
    DEFAULT_CLOCK,
    ENV_ACCOUNT,
    HEADER_ACCOUNT,
    SECOND_ACCOUNT,
    MapStore,
)

JSON = dict[str, Any]
CREATE_PARAMS = frozenset({"account", "tenant", "title", "content_text", "allowed_actions", "expires_at"})


def build_controller(store: MapStore) -> Controller:
    """Every hook the MAP suite knows, over one store."""
    controller = Controller("mcp-conformance MAP reference controller")

    @controller.hook
    @guarded()
    def reset(params: JSON) -> JSON:
        return store.reset()

    @controller.hook
    @guarded()
    def create_review(params: JSON) -> JSON:
        unknown = set(params) - CREATE_PARAMS
        if unknown:
            raise HookError("unsupported", f"unknown create_review params: {', '.join(sorted(unknown))}")
        return store.create_review(params)

    @controller.hook
    @guarded()
    def mutate_terms(params: JSON) -> JSON:
        return store.mutate_terms(params["review_id"], params["term"])

    @controller.hook
    @guarded()
    def set_clock(params: JSON) -> JSON:
        now = params["now"]
        if now is not None and not isinstance(now, str):
            raise HookError("invalid_params", "now must be an RFC 3339 instant or null")
        return store.set_clock(now)

    @controller.hook
    @guarded()
    def revoke_permission(params: JSON) -> JSON:
        return store.revoke_permission(params["review_id"], params.get("account", "primary"))

    @controller.hook
    @guarded()
    def second_account(params: JSON) -> JSON:
        return {
            "account": SECOND_ACCOUNT,
            "env": {ENV_ACCOUNT: SECOND_ACCOUNT},
            "headers": {HEADER_ACCOUNT: SECOND_ACCOUNT},
        }

    # The hooks that name one review and nothing else: the store's method of the same name.
    for name in ("withdraw", "expire", "publication_jobs", "review_state"):
        controller.add(name, guarded()(_of_review(getattr(store, name))))
    return controller


def _of_review(method: Callable[[str], JSON]) -> Callable[[JSON], JSON]:
    """A hook calling `method` with the review its params name (`review_id`)."""

    def run(params: JSON) -> JSON:
        return method(params["review_id"])

    run.__name__ = method.__name__
    return run


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = controller_parser(
        "python -m conformance_reference.map_controller",
        "Fixture controller of the reference MAP review service (JSON lines on stdio).",
        "the service's SQLite file (shared with its processes)",
    )
    parser.add_argument(
        "--clock", default=DEFAULT_CLOCK, help="clock of a new database (ISO instant or system)"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None, store_class: type[MapStore] = MapStore) -> int:
    args = parse_args(argv)
    return serve_controller(build_controller(store_class(args.db, clock=args.clock)), args)


if __name__ == "__main__":
    sys.exit(main())
