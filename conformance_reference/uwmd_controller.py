"""The fixture controller of the reference UW Markdown binding server, built with the project's helper.

It opens the same SQLite file as the server processes (`--db`), so a deal it loads or a grant it changes is
seen at once by every stdio racer and by the HTTP server. The hooks (params and results defined as
`hook.<name>.*` in `urn:mcp-conformance:uwmd:1`, documented in docs/uwmd-profile.md):

    reset                 the example deals and their tenants' grants, nothing else
    load_deal             store an envelope (optionally under another id, for another tenant)
    load_representation   store raw bytes as a deal's source, unchecked (hostile inputs)
    grant                 what a principal may read of a deal: representations and views, '*' or nothing
    second_principal      how a session acts as the second tenant's principal

    python -m conformance_reference.uwmd_controller --db state.db            # JSON lines on stdin/stdout
    python -m conformance_reference.uwmd_controller --db state.db --http     # POST /fixture on loopback
"""

from __future__ import annotations

import argparse
import base64
import binascii
import sys
from collections.abc import Sequence
from typing import Any

from conformance.fixtures import Controller, HookError
from conformance_reference.controllers import controller_parser, guarded, serve_controller
from conformance_reference.uwmd_state import ENV_PRINCIPAL, HEADER_PRINCIPAL, SECOND, UwmdStore

JSON = dict[str, Any]
#: A hostile body may be larger than any codec limit (it exists to be refused); this only bounds the hook.
MAX_BODY = 8 * 1024 * 1024


def build_controller(store: UwmdStore) -> Controller:
    """Every hook the uwmd suite knows, over one store."""
    controller = Controller("mcp-conformance UWMD reference controller")

    @controller.hook
    @guarded(frozenset())
    def reset(params: JSON) -> JSON:
        return store.reset()

    @controller.hook
    @guarded(frozenset({"document", "deal_id", "tenant"}))
    def load_deal(params: JSON) -> JSON:
        return store.load_deal(params["document"], params.get("deal_id"), params.get("tenant", "primary"))

    @controller.hook
    @guarded(frozenset({"deal_id", "representation", "body_base64", "tenant"}))
    def load_representation(params: JSON) -> JSON:
        encoded = params["body_base64"]
        if not isinstance(encoded, str) or len(encoded) > MAX_BODY * 4 // 3 + 4:
            raise HookError("invalid_params", "body_base64 must be a base64 string of at most 8 MiB")
        try:
            body = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise HookError("invalid_params", "body_base64 is not base64") from None
        return store.load_representation(
            params["deal_id"], params["representation"], body, params.get("tenant", "primary")
        )

    @controller.hook
    @guarded(frozenset({"principal", "deal_id", "representations"}))
    def grant(params: JSON) -> JSON:
        return store.grant(params["principal"], params["deal_id"], params["representations"])

    @controller.hook
    @guarded(frozenset())
    def second_principal(params: JSON) -> JSON:
        return {"principal": SECOND, "env": {ENV_PRINCIPAL: SECOND}, "headers": {HEADER_PRINCIPAL: SECOND}}

    return controller


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    return controller_parser(
        "python -m conformance_reference.uwmd_controller",
        "Fixture controller of the reference UWMD server (JSON lines on stdio).",
        "the server's SQLite file (shared with its processes)",
    ).parse_args(argv)


def main(argv: Sequence[str] | None = None, store_class: type[UwmdStore] = UwmdStore) -> int:
    args = parse_args(argv)
    return serve_controller(build_controller(store_class(args.db)), args)


if __name__ == "__main__":
    sys.exit(main())
