"""The test authorization server with one planted defect each, for tests/packs/auth_server.

Each defect is a mistake real authorization servers make, planted by overriding the one method of
`conformance.infra.authority.AuthorityServer` or `conformance.infra.oauth_grants.OAuthGrants` that owns
the rule; everything else is the reference as it is. `started(defect)` serves one on loopback, in a
thread of the test process, with an issuer that has a path (as the embedded default has).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from conformance.infra.authority import AuthorityServer, new_key
from conformance.infra.oauth_grants import Answer, Client, Grant, OAuthError, OAuthGrants


class NoMetadata(AuthorityServer):
    def metadata_paths(self) -> tuple[str, ...]:
        return ("/metadata-nowhere",)


class TextMetadata(AuthorityServer):
    def metadata_answer(self) -> Answer:
        return Answer(200, self.metadata(), headers={"Content-Type": "text/plain"})


class WrongIssuer(AuthorityServer):
    def metadata(self) -> dict[str, Any]:
        return {**super().metadata(), "issuer": self.issuer + "/"}


class NoResponseTypes(AuthorityServer):
    def metadata(self) -> dict[str, Any]:
        return {k: v for k, v in super().metadata().items() if k != "response_types_supported"}


class NoS256(AuthorityServer):
    def metadata(self) -> dict[str, Any]:
        return {**super().metadata(), "code_challenge_methods_supported": ["plain"]}


class NoCimdFlag(AuthorityServer):
    def metadata(self) -> dict[str, Any]:
        return {k: v for k, v in super().metadata().items() if k != "client_id_metadata_document_supported"}


class Registration200(OAuthGrants):
    def register(self, document: Any) -> Answer:
        answer = super().register(document)
        return Answer(200, answer.body)


class RegistrationWithoutId(OAuthGrants):
    def register(self, document: Any) -> Answer:
        answer = super().register(document)
        return Answer(201, {k: v for k, v in (answer.body or {}).items() if k != "client_id"})


class AnyDocument(OAuthGrants):
    def document_names_itself(self, document: Any, url: str) -> bool:
        return isinstance(document, dict)


class StateDropped(OAuthGrants):
    def echoed_state(self, state: dict[str, str]) -> dict[str, str]:
        return {}


class NoTokenType(OAuthGrants):
    def issued(self, grant: Grant) -> Answer:
        answer = super().issued(grant)
        return Answer(answer.status, {k: v for k, v in (answer.body or {}).items() if k != "token_type"})


class Cacheable(OAuthGrants):
    def token_headers(self) -> dict[str, str]:
        return {"Cache-Control": "max-age=60"}


class TextErrors(OAuthGrants):
    def error_answer(self, error: OAuthError) -> Answer:
        return Answer(error.status, headers={"Content-Type": "text/plain"})


class PkceIgnored(OAuthGrants):
    def verifier_matches(self, challenge: str, verifier: str) -> bool:
        return True


class IssuerAudience(OAuthGrants):
    def audience(self, grant: Grant) -> str:
        return self.issuer


class NoRotation(OAuthGrants):
    def rotates(self, client: Client) -> bool:
        return False


#: defect -> (server class, grants class): one planted defect each ("none": the reference).
DEFECTS: dict[str, tuple[type[AuthorityServer], type[OAuthGrants]]] = {
    "none": (AuthorityServer, OAuthGrants),
    "no-metadata": (NoMetadata, OAuthGrants),
    "text-metadata": (TextMetadata, OAuthGrants),
    "wrong-issuer": (WrongIssuer, OAuthGrants),
    "no-response-types": (NoResponseTypes, OAuthGrants),
    "no-s256": (NoS256, OAuthGrants),
    "no-cimd-flag": (NoCimdFlag, OAuthGrants),
    "registration-200": (AuthorityServer, Registration200),
    "registration-without-id": (AuthorityServer, RegistrationWithoutId),
    "any-document": (AuthorityServer, AnyDocument),
    "state-dropped": (AuthorityServer, StateDropped),
    "no-token-type": (AuthorityServer, NoTokenType),
    "cacheable": (AuthorityServer, Cacheable),
    "text-errors": (AuthorityServer, TextErrors),
    "pkce-ignored": (AuthorityServer, PkceIgnored),
    "issuer-audience": (AuthorityServer, IssuerAudience),
    "no-rotation": (AuthorityServer, NoRotation),
}


@contextmanager
def started(defect: str, path: str = "/oauth") -> Iterator[AuthorityServer]:
    """The server with `defect`, serving on 127.0.0.1 until the block ends."""
    server_class, grants_class = DEFECTS[defect]
    planted = type(f"{server_class.__name__}Serving", (server_class,), {"grants_class": grants_class})
    server = planted(new_key(), path=path, scopes=("mcp:tools",))
    server.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
