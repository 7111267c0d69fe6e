"""What a client sent in an OAuth scenario, read from the raw recording: its metadata fetches, its
authorization requests (the query), token requests (the form and the Authorization header),
registrations (the JSON) and MCP requests (with or without a bearer token), each in arrival order, and
the facts the scenario gave (`recording.facts["auth"]`: the issuers, the resource, where metadata is).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from conformance.pack_api import Arrival, ClientContext
from conformance_packs.client.auth_server import basic_credentials, form


@dataclass(frozen=True)
class Sent:
    """One request to an authorization endpoint: which server (its index), and its parameters."""

    arrival: Arrival
    server: int
    params: dict[str, Any]

    @property
    def basic(self) -> tuple[str, str] | None:
        return basic_credentials(self.arrival.headers.get("authorization"))

    @property
    def client_id(self) -> str | None:
        basic = self.basic
        return basic[0] if basic else self.params.get("client_id")


def path_of(arrival: Arrival) -> str:
    return urlsplit(arrival.path).path


class AuthWire:
    """The recording of one OAuth scenario run, sorted by endpoint."""

    def __init__(self, ctx: ClientContext) -> None:
        self.ctx = ctx
        self.facts: dict[str, Any] = ctx.recording.facts.get("auth") or {}
        self.arrivals = list(ctx.recording.arrivals)

    @property
    def servers(self) -> list[dict[str, Any]]:
        return list(self.facts.get("servers") or [])

    def server_of(self, path: str, endpoint: str) -> int | None:
        for index, server in enumerate(self.servers):
            if path == server["prefix"] + endpoint:
                return index
        return None

    def _sent(self, method: str, endpoint: str, parse: Any) -> list[Sent]:
        found = []
        for arrival in self.arrivals:
            index = self.server_of(path_of(arrival), endpoint) if arrival.method == method else None
            if index is not None:
                found.append(Sent(arrival, index, parse(arrival)))
        return found

    def authorizations(self) -> list[Sent]:
        """Each authorization request once: the same URL fetched again (a client's pre-flight check
        before the browser opens it, a reload) is the same request, its `state` and PKCE challenge
        unchanged, not another authorization."""
        once: dict[tuple[int, str], Sent] = {}
        for sent in self._sent("GET", "/authorize", lambda a: dict(parse_qsl(urlsplit(a.path).query, True))):
            once.setdefault((sent.server, sent.arrival.path), sent)
        return list(once.values())

    def token_requests(self) -> list[Sent]:
        return self._sent("POST", "/token", lambda a: form(a.body))

    def code_exchanges(self) -> list[Sent]:
        return [t for t in self.token_requests() if t.params.get("grant_type") == "authorization_code"]

    def registrations(self) -> list[Sent]:
        def document(arrival: Arrival) -> dict[str, Any]:
            try:
                value = json.loads(arrival.body)
            except ValueError:
                return {}
            return value if isinstance(value, dict) else {}

        return self._sent("POST", "/register", document)

    def gets(self) -> list[str]:
        """The paths of every GET other than the MCP endpoint, in order."""
        return [path_of(a) for a in self.arrivals if a.method == "GET" and path_of(a) != "/mcp"]

    def mcp_posts(self) -> list[Arrival]:
        return [a for a in self.arrivals if a.method == "POST" and path_of(a) == "/mcp"]

    def first_authorization(self) -> Sent:
        """The first authorization request; none is SKIP (the flow row judges its absence)."""
        found = self.authorizations()
        if not found:
            self.ctx.absent("the client made no authorization request (CLIENT-AUTH-003 judges the flow)")
        return found[0]

    def first_exchange(self) -> Sent:
        found = self.code_exchanges()
        if not found:
            self.ctx.absent("the client made no token request (CLIENT-AUTH-003 judges the flow)")
        return found[0]
