"""The reference client's OAuth: an `httpx.Auth` that answers the MCP server's 401 (and a 403
`insufficient_scope`) with MCP's authorization flow, so the transports (client_wire.py) stay as they are.

Why its own flow and not the `mcp` SDK's OAuth provider: the scenarios judge each step the client
takes (which well-known URI first, which scope, RFC 9207's `iss`, the resource identifier exactly as
the metadata publishes it, re-registration when the authorization server changes), and a mutant
(tests/servers/client_auth_mutants.py) must change exactly one of them: every step is a method here.
The flow follows MCP 2025-11-25 and 2026-07-28 basic/authorization: protected resource metadata from
the challenge's `resource_metadata` or the well-known URIs, authorization server metadata in the
spec's order (its issuer checked), pre-registered credentials, then a client ID metadata document,
then dynamic registration; PKCE S256, `state`, `resource`; the `iss` table; the bearer token. Where the
authorization server supports DPoP (RFC 9449, the MCP DPoP extension), every token request carries a
proof and a DPoP-bound token goes out with the `DPoP` scheme and a fresh proof per request, a server's
`use_dpop_nonce` answered once with its nonce.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from conformance_reference.client_dpop import DpopKey

#: This client's client ID metadata document URL (an https URL with a path, as the spec requires; the
#: scenarios never fetch it).
CIMD_URL = "https://client.example/mcp-conformance-reference.json"
REDIRECT_URI = "http://127.0.0.1:8976/callback"
WELL_KNOWN_PRM = "/.well-known/oauth-protected-resource"
MARCH = "2025-03-26"
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
#: The JWT bearer grant (RFC 7523 section 2.1) and RFC 8693's token exchange, with the token types the
#: enterprise-managed authorization extension names.
JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG, ID_TOKEN = "urn:ietf:params:oauth:token-type:id-jag", "urn:ietf:params:oauth:token-type:id_token"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
#: How many authorizations one request may start (the official retry-limit scenario allows three).
ATTEMPTS = 3

Flow = Generator[httpx.Request, httpx.Response, Any]


class AuthFailure(httpx.HTTPError):
    """The flow stopped: a document it must not use, a response it must reject, no way to go on."""


@dataclass
class Challenge:
    """A parsed `WWW-Authenticate: Bearer ...` challenge."""

    params: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, header: str) -> Challenge:
        return cls(dict(re.findall(r'(\w+)="([^"]*)"', header)))


@dataclass
class Registration:
    client_id: str
    secret: str | None = None
    method: str = "none"


def _error(response: httpx.Response) -> Any:
    """The OAuth `error` code of an error answer, or None."""
    try:
        body = response.json()
    except ValueError:
        return None
    return body.get("error") if isinstance(body, dict) else None


def _json(response: httpx.Response) -> Any:
    try:
        return response.json() if response.status_code == 200 else None
    except ValueError:
        return None


class OAuthFlow(httpx.Auth):
    """MCP's authorization for the requests of one client run."""

    requires_response_body = True

    def __init__(self, mcp_url: str, revision: str) -> None:
        self.mcp_url = mcp_url
        self.revision = revision
        self.context: dict[str, Any] = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
        self.token: str | None = None
        self.scopes: list[str] = []
        self.registrations: dict[str, Registration] = {}
        self.token_type = "Bearer"
        #: The DPoP key once an authorization server supports DPoP, and the nonces servers supplied.
        self.dpop: DpopKey | None = None
        self.as_nonce: str | None = None
        self.rs_nonce: str | None = None

    def auth_flow(self, request: httpx.Request) -> Flow:
        self.sign(request)
        response = yield from self.nonce_retry(request, (yield request))
        attempts = 0
        while response.status_code in (401, 403):
            challenge = Challenge.parse(response.headers.get("www-authenticate", ""))
            if challenge.params.get("error") == "use_dpop_nonce":
                raise AuthFailure("still use_dpop_nonce after a proof with the server's nonce")
            step_up = response.status_code == 403
            if step_up and challenge.params.get("error") != "insufficient_scope":
                raise AuthFailure("the server refused the request (403)")
            if attempts >= self.attempt_limit():
                raise AuthFailure(f"still refused ({response.status_code}) after {attempts} authorizations")
            attempts += 1
            yield from self.authorize(challenge, step_up)
            self.sign(request)
            response = yield from self.nonce_retry(request, (yield request))
        if attempts and response.status_code >= 400:
            raise AuthFailure(f"the request was refused ({response.status_code}) after authorization")

    def attempt_limit(self) -> int:
        """Authorizations one request may start (MCP: clients SHOULD implement retry limits)."""
        return ATTEMPTS

    def sign(self, request: httpx.Request) -> None:
        if not self.token:
            return
        if self.dpop is None or self.token_type.lower() != "dpop":
            request.headers["Authorization"] = f"Bearer {self.token}"
            return
        request.headers["Authorization"] = f"{self.dpop_scheme()} {self.token}"
        request.headers["DPoP"] = self.resource_proof(request)

    # -- DPoP (RFC 9449) ----------------------------------------------------------------------------------

    def dpop_scheme(self) -> str:
        """RFC 9449 section 7.1: a DPoP-bound token goes out with the DPoP scheme."""
        return "DPoP"

    def resource_proof(self, request: httpx.Request) -> str:
        """A fresh proof for this request, bound to the token (`ath`), with the resource's nonce."""
        assert self.dpop is not None and self.token is not None
        return self.dpop.proof(request.method, str(request.url), token=self.token, nonce=self.rs_nonce)

    def dpop_key(self, metadata: dict[str, Any]) -> DpopKey | None:
        """RFC 9449 section 5.1: DPoP where the authorization server takes ES256 proofs (one key a run)."""
        if "ES256" not in (metadata.get("dpop_signing_alg_values_supported") or []):
            return None
        return self.dpop or DpopKey()

    def token_proof(self, url: str) -> dict[str, str]:
        """The DPoP header of a token request (none without DPoP)."""
        return {} if self.dpop is None else {"DPoP": self.dpop.proof("POST", url, nonce=self.as_nonce)}

    def nonce_of(self, response: httpx.Response) -> str | None:
        """The nonce a `use_dpop_nonce` answer supplies (RFC 9449 sections 8 and 9)."""
        return response.headers.get("dpop-nonce")

    def nonce_retry(self, request: httpx.Request, response: httpx.Response) -> Flow:
        """RFC 9449 section 9: a 401 `use_dpop_nonce` from the resource retried once, the nonce in a
        fresh proof (and in every proof after)."""
        challenge = response.headers.get("www-authenticate", "")
        if response.status_code != 401 or self.dpop is None or "use_dpop_nonce" not in challenge:
            return response
        self.rs_nonce = self.nonce_of(response)
        self.sign(request)
        return (yield request)

    def exchange(self, url: str, fields: dict[str, str], headers: dict[str, str]) -> Flow:
        """The token request, with a proof under DPoP; RFC 9449 section 8: a 400 `use_dpop_nonce`
        retried once with the nonce in a fresh proof."""
        body = urlencode(fields)
        issued = yield httpx.Request("POST", url, content=body, headers=headers | self.token_proof(url))
        if self.dpop is not None and issued.status_code == 400 and _error(issued) == "use_dpop_nonce":
            self.as_nonce = self.nonce_of(issued)
            issued = yield httpx.Request("POST", url, content=body, headers=headers | self.token_proof(url))
        return issued

    # -- discovery ------------------------------------------------------------------------------------

    def prm_candidates(self, challenge: Challenge) -> list[str]:
        """The challenge's `resource_metadata` when given, else the path-inserted then root URIs."""
        if "resource_metadata" in challenge.params:
            return [challenge.params["resource_metadata"]]
        parts = urlsplit(self.mcp_url)
        origin = f"{parts.scheme}://{parts.netloc}"
        path = parts.path.rstrip("/")
        return (
            [origin + WELL_KNOWN_PRM + path, origin + WELL_KNOWN_PRM] if path else [origin + WELL_KNOWN_PRM]
        )

    def accept_prm(self, document: Any, fetched: str = "") -> bool:
        """RFC 9728 section 3.3: the resource must be the one the client asked for, or, for metadata
        found at the root well-known URI (`fetched`), the resource identifier that URI is built from:
        the MCP server's origin."""
        if not isinstance(document, dict):
            return False
        parts = urlsplit(self.mcp_url)
        root = f"{parts.scheme}://{parts.netloc}"
        allowed = {self.mcp_url} | ({root} if fetched == root + WELL_KNOWN_PRM else set())
        return document.get("resource") in allowed

    def metadata_candidates(self, issuer: str) -> list[str]:
        """MCP's order: RFC 8414 path insertion, OIDC path insertion, OIDC path appending."""
        parts = urlsplit(issuer)
        origin, path = f"{parts.scheme}://{parts.netloc}", parts.path.rstrip("/")
        if not path:
            return [
                origin + "/.well-known/oauth-authorization-server",
                origin + "/.well-known/openid-configuration",
            ]
        return [
            origin + "/.well-known/oauth-authorization-server" + path,
            origin + "/.well-known/openid-configuration" + path,
            origin + path + "/.well-known/openid-configuration",
        ]

    def accept_metadata(self, document: Any, issuer: str) -> bool:
        """RFC 8414 section 3.3: the issuer must be the one the URL was built from; PKCE S256 offered."""
        return (
            isinstance(document, dict)
            and document.get("issuer") == issuer
            and "S256" in (document.get("code_challenge_methods_supported") or [])
        )

    def discover(
        self, challenge: Challenge
    ) -> Generator[httpx.Request, httpx.Response, tuple[dict, str, dict]]:
        if self.revision == MARCH:
            return (yield from self.base_url_discovery())
        prm, url = None, ""
        for url in self.prm_candidates(challenge):
            prm = _json((yield httpx.Request("GET", url)))
            if prm is not None:
                break
        if not self.accept_prm(prm, url):
            raise AuthFailure(f"no usable protected resource metadata for {self.mcp_url}")
        assert isinstance(prm, dict)
        issuer = str((prm.get("authorization_servers") or [""])[0])
        for url in self.metadata_candidates(issuer):
            metadata = _json((yield httpx.Request("GET", url)))
            if metadata is not None:
                if not self.accept_metadata(metadata, issuer):
                    raise AuthFailure(f"authorization server metadata at {url} is not usable")
                return prm, issuer, metadata
        raise AuthFailure(f"no authorization server metadata for {issuer}")

    def default_endpoints(self, base: str) -> dict[str, Any]:
        """2025-03-26's fallback: the default paths under the authorization base URL."""
        return {
            "issuer": base,
            "authorization_endpoint": base + "/authorize",
            "token_endpoint": base + "/token",
            "registration_endpoint": base + "/register",
            "code_challenge_methods_supported": ["S256"],
        }

    def base_url_discovery(self) -> Generator[httpx.Request, httpx.Response, tuple[dict, str, dict]]:
        """2025-03-26: no protected resource metadata; the authorization base URL is the MCP URL without
        its path, its RFC 8414 metadata tried first, the default endpoints when there is none."""
        parts = urlsplit(self.mcp_url)
        base = f"{parts.scheme}://{parts.netloc}"
        metadata = _json((yield httpx.Request("GET", base + "/.well-known/oauth-authorization-server")))
        if metadata is None:
            metadata = self.default_endpoints(base)
        elif not self.accept_metadata(metadata, base):
            raise AuthFailure("the authorization base URL's metadata is not usable")
        return {"resource": self.mcp_url}, base, metadata

    # -- registration -----------------------------------------------------------------------------------

    def auth_method(self, metadata: dict[str, Any], secret: bool) -> str:
        supported = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        for method in (["client_secret_basic", "client_secret_post"] if secret else []) + ["none"]:
            if method in supported:
                return method
        return str(supported[0])

    def registration_body(self, metadata: dict[str, Any]) -> dict[str, Any]:
        return {
            "client_name": "mcp-conformance reference client",
            "redirect_uris": [REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": self.auth_method(metadata, True),
            "application_type": "native",
        }

    def register(
        self, issuer: str, metadata: dict[str, Any]
    ) -> Generator[httpx.Request, httpx.Response, Registration]:
        """Credentials for `issuer` (never another server's): pre-registered, CIMD, then DCR."""
        if issuer in self.registrations:
            return self.registrations[issuer]
        if "client_id" in self.context:
            secret = self.context.get("client_secret")
            found = Registration(self.context["client_id"], secret, self.auth_method(metadata, bool(secret)))
        elif metadata.get("client_id_metadata_document_supported") is True:
            found = Registration(CIMD_URL)
        elif "registration_endpoint" in metadata:
            body = self.registration_body(metadata)
            answer = yield httpx.Request("POST", metadata["registration_endpoint"], json=body)
            issued = answer.json() if answer.status_code in (200, 201) else {}
            if "client_id" not in issued:
                raise AuthFailure("dynamic client registration failed")
            method = issued.get("token_endpoint_auth_method") or body["token_endpoint_auth_method"]
            found = Registration(issued["client_id"], issued.get("client_secret"), method)
        else:
            raise AuthFailure("no way to obtain a client ID")
        self.registrations[issuer] = found
        return found

    # -- the authorization code grant -------------------------------------------------------------------

    def scope_for(
        self, challenge: Challenge, prm: dict[str, Any], metadata: dict, step_up: bool
    ) -> list[str]:
        """The challenge's scope (with what was asked before, on step-up), else PRM's scopes_supported;
        offline_access only when the authorization server lists it."""
        if "scope" in challenge.params:
            wanted = challenge.params["scope"].split()
            scopes = [*self.scopes, *[s for s in wanted if s not in self.scopes]] if step_up else wanted
        else:
            scopes = list(prm.get("scopes_supported") or [])
        if "offline_access" in (metadata.get("scopes_supported") or []) and "offline_access" not in scopes:
            scopes.append("offline_access")
        return scopes

    def pkce(self) -> tuple[str, str]:
        verifier = secrets.token_urlsafe(48)
        digest = hashlib.sha256(verifier.encode("ascii")).digest()
        return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")

    def authorization_params(
        self, client: Registration, scopes: list[str], resource: str, challenge: str, state: str
    ) -> dict[str, str]:
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": REDIRECT_URI,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": state,
            "resource": resource,
        }
        if scopes:
            params["scope"] = " ".join(scopes)
        return params

    def accept_response(
        self, answer: dict[str, str], state: str, issuer: str, metadata: dict[str, Any]
    ) -> None:
        """The `state` echoed, and RFC 9207 section 2.4 as MCP 2026-07-28 tables it: a present `iss`
        compared by simple string comparison, an absent one rejected when advertised."""
        if answer.get("state") != state:
            raise AuthFailure("the authorization response's state does not match")
        if "iss" in answer:
            if answer["iss"] != issuer:
                raise AuthFailure(f"the authorization response's iss {answer['iss']!r} is not {issuer!r}")
        elif metadata.get("authorization_response_iss_parameter_supported") is True:
            raise AuthFailure("the authorization server advertises iss but its response has none")

    def token_request(
        self, client: Registration, fields: dict[str, str]
    ) -> tuple[dict[str, str], dict[str, str]]:
        """The token request's form and headers, authenticated by the client's method."""
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if client.method == "client_secret_basic" and client.secret is not None:
            pair = f"{client.client_id}:{client.secret}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
        else:
            fields["client_id"] = client.client_id
            if client.method == "client_secret_post" and client.secret is not None:
                fields["client_secret"] = client.secret
        return fields, headers

    def authorize(self, challenge: Challenge, step_up: bool) -> Flow:
        prm, issuer, metadata = yield from self.discover(challenge)
        self.dpop = self.dpop_key(metadata)
        grants = metadata.get("grant_types_supported") or ["authorization_code"]
        if "authorization_code" not in grants and "client_credentials" in grants:
            yield from self.client_credentials(prm, issuer, metadata)
            return
        if "authorization_code" not in grants and JWT_BEARER_GRANT in grants:
            yield from self.assertion_grant(prm, issuer, metadata)
            return
        client = yield from self.register(issuer, metadata)
        scopes = self.scope_for(challenge, prm, metadata, step_up)
        verifier, code_challenge = self.pkce()
        state = secrets.token_urlsafe(24)
        params = self.authorization_params(client, scopes, str(prm["resource"]), code_challenge, state)
        url = metadata["authorization_endpoint"] + "?" + urlencode(params)
        redirect = yield httpx.Request("GET", url)
        location = redirect.headers.get("location", "")
        answer = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        self.accept_response(answer, state, issuer, metadata)
        fields = {
            "grant_type": "authorization_code",
            "code": answer.get("code", ""),
            "redirect_uri": REDIRECT_URI,
            "code_verifier": verifier,
            "resource": str(prm["resource"]),
        }
        form, headers = self.token_request(client, fields)
        issued = yield from self.exchange(metadata["token_endpoint"], form, headers)
        self.take(issued, scopes)

    def take(self, issued: httpx.Response, scopes: list[str]) -> None:
        token = _json(issued)
        if not isinstance(token, dict) or "access_token" not in token:
            raise AuthFailure(f"the token endpoint answered {issued.status_code}")
        self.token, self.scopes = token["access_token"], scopes
        self.token_type = str(token.get("token_type") or "Bearer")

    # -- the client credentials extension (io.modelcontextprotocol/oauth-client-credentials) -----------

    def assertion(self, client_id: str, audience: str) -> str:
        """An RFC 7523 client assertion signed with the context's private key."""
        from joserfc import jwt
        from joserfc.jwk import ECKey

        now = int(time.time())
        claims = {"iss": client_id, "sub": client_id, "aud": audience, "iat": now, "exp": now + 300}
        claims["jti"] = secrets.token_urlsafe(16)
        key = ECKey.import_key(self.context["private_key_pem"])
        return jwt.encode({"alg": self.context.get("signing_algorithm", "ES256")}, claims, key)

    def client_credentials(self, prm: dict[str, Any], issuer: str, metadata: dict[str, Any]) -> Flow:
        """The client credentials grant with the context's credentials: a signed assertion when it
        gives a private key, else its secret by the method the server supports."""
        client_id = str(self.context.get("client_id", ""))
        fields = {"grant_type": "client_credentials", "resource": str(prm["resource"])}
        if "private_key_pem" in self.context:
            fields |= {"client_id": client_id, "client_assertion_type": JWT_BEARER}
            fields["client_assertion"] = self.assertion(client_id, issuer)
            headers = {"Content-Type": "application/x-www-form-urlencoded"}
        else:
            secret = self.context.get("client_secret")
            client = Registration(client_id, secret, self.auth_method(metadata, bool(secret)))
            fields, headers = self.token_request(client, fields)
        issued = yield from self.exchange(metadata["token_endpoint"], fields, headers)
        self.take(issued, [])

    # -- the assertion grants: enterprise-managed authorization (SEP-990), workload identity (SEP-1933) --

    def assertion_grant(self, prm: dict[str, Any], issuer: str, metadata: dict[str, Any]) -> Flow:
        """The JWT bearer grant (RFC 7523 section 2.1): with an ID-JAG the IdP gives for the context's
        ID token, authenticated by the client's own credentials (enterprise-managed authorization), else
        with the context's workload JWT, as a public client (workload identity federation). A refusal
        ends the flow: the grant is never retried, nor another tried."""
        resource = str(prm["resource"])
        if "idp_id_token" in self.context:
            assertion = yield from self.id_jag(issuer, resource)
            secret = self.context.get("client_secret")
            client = Registration(
                str(self.context["client_id"]), secret, self.auth_method(metadata, bool(secret))
            )
        else:
            assertion = self.workload_jwt()
            client = Registration(str(self.context.get("client_id", "")))
        fields = self.grant_fields(assertion, resource)
        form, headers = self.token_request(client, fields)
        issued = yield httpx.Request(
            "POST", metadata["token_endpoint"], content=urlencode(form), headers=headers
        )
        self.take(issued, [])

    def grant_fields(self, assertion: str, resource: str) -> dict[str, str]:
        return {"grant_type": JWT_BEARER_GRANT, "assertion": assertion, "resource": resource}

    def workload_jwt(self) -> str:
        """The workload's JWT for this authorization server (the context's valid one)."""
        return str(self.context.get("valid_jwt", ""))

    def exchange_params(self, issuer: str, resource: str) -> dict[str, str]:
        """RFC 8693 token exchange of the ID token for an ID-JAG naming this authorization server
        (its issuer) and this resource (the protected resource metadata's)."""
        return {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "audience": issuer,
            "resource": resource,
            "subject_token": str(self.context["idp_id_token"]),
            "subject_token_type": ID_TOKEN,
            "client_id": str(self.context.get("idp_client_id", "")),
        }

    def id_jag(self, issuer: str, resource: str) -> Generator[httpx.Request, httpx.Response, str]:
        params = self.exchange_params(issuer, resource)
        answer = yield httpx.Request(
            "POST", self.context["idp_token_endpoint"], content=urlencode(params), headers=FORM
        )
        body = _json(answer)
        if (
            not isinstance(body, dict)
            or body.get("issued_token_type") != ID_JAG
            or "access_token" not in body
        ):
            raise AuthFailure(f"the IdP's token exchange answered {answer.status_code}")
        return str(body["access_token"])
