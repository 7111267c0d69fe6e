"""The authorization suite's tokens: minted once a target's URL is known, before anything is sent.

`prepare` is the pack's hook (`Pack.prepare`): it reads the target's `[auth]` table and returns the
target with a valid token as its `Authorization` header (so every session the engine opens is
authenticated) and every token of the run among its secrets (so none reaches a transcript, report or
log). The tokens the checks send are in `settings["auth"]["tokens"]`, by kind.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from joserfc import jwt

from conformance.pack_api import ALGORITHM, Target, load_authority_key, mint, new_key, token_set
from conformance_packs.auth import discovery

#: Seconds for each metadata GET made while preparing a target.
DISCOVERY_TIMEOUT = 10.0


def reference_setup(kind: str, folder: str) -> tuple[tuple[str, ...], dict[str, Any]]:
    """The embedded default: the protected reference hosts the test authorization server with a key in
    the run's temporary folder, and the suite mints its tokens with the same key."""
    key_file = os.path.join(folder, f"auth-{kind}-key.json")
    load_authority_key(key_file)  # written now, so that the reference and the harness share it
    return ("--key-file", key_file), {"auth": {"key_file": key_file}}


async def prepare(target: Target) -> Target:
    if target.kind != "http" or not target.url:
        return target  # stdio: MCP's authorization is not for it (the suite says so, case by case)
    table = dict(target.settings.get("auth") or {})
    if "token_env" in table:
        tokens, facts = _given_tokens(table)
    elif "key_file" in table:
        tokens, facts = await _minted_tokens(table, target.url)
    else:
        raise ValueError(
            "an [auth] table with key_file (the test authorization server's key) or token_env (a real"
            " token) is needed: see docs/auth.md"
        )
    settings = {**target.settings, "auth": {**table, **facts, "tokens": tokens}}
    headers = {k: v for k, v in target.headers.items() if k.lower() != "authorization"}
    headers["Authorization"] = "Bearer " + tokens["valid"]
    secrets = tuple(dict.fromkeys((*target.secrets, *tokens.values())))
    return replace(target, headers=headers, secrets=secrets, settings=settings)


def _environment(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ValueError(f"environment variable {name} ([auth] token_env) is not set")
    return value


def _given_tokens(table: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """A real token from the environment, and what can be made beside it without the issuer's key: a
    malformed token, and (for a JWT) one with the same claims signed by a key nobody trusts."""
    valid = _environment(table["token_env"])
    throwaway = new_key()
    tokens = {"valid": valid, "malformed": mint(throwaway, issuer="x", audience="x", kind="malformed")}
    claims, header = _unverified(valid)
    if claims is not None:
        forger = new_key(kid=str(header.get("kid") or throwaway.kid))
        tokens["unknown-key"] = jwt.encode(
            {"alg": ALGORITHM, "kid": forger.kid, "typ": "at+jwt"}, claims, forger.key
        )
    if table.get("small_scope_token_env"):
        tokens["small-scope"] = _environment(table["small_scope_token_env"])
    return tokens, {"mode": "token"}


def _unverified(token: str) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """A JWT's claims and header, read without checking anything (to forge a look-alike), or None."""
    parts = token.split(".")
    if len(parts) != 3:
        return None, {}
    try:
        header, claims = (json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4))) for p in parts[:2])
    except ValueError:
        return None, {}
    if not isinstance(claims, dict) or not isinstance(header, dict):
        return None, {}
    return claims, header


async def _minted_tokens(table: dict[str, Any], url: str) -> tuple[dict[str, str], dict[str, Any]]:
    key = load_authority_key(Path(table["key_file"]), create=False)
    issuer, scope = table.get("issuer"), table.get("scope")
    if issuer is None or scope is None:
        found_issuer, found_scope = await _discover(url)
        issuer = issuer or found_issuer
        scope = scope if scope is not None else found_scope
    if not issuer:
        raise ValueError(f"no authorization server is named in {url}'s metadata: give [auth] issuer")
    resource = table.get("resource") or url
    tokens = token_set(key, issuer=issuer, audience=resource, scope=scope or "")
    # Where the scope came from: the target file names it, or the metadata's scopes_supported does.
    scope_from = "target file" if table.get("scope") is not None else "metadata"
    facts = {
        "mode": "key",
        "issuer": issuer,
        "resource": resource,
        "scope": scope or "",
        "scope_from": scope_from,
    }
    return tokens, facts


async def _discover(url: str) -> tuple[str | None, str | None]:
    """The issuer (as its own metadata spells it) and the scopes the target's RFC 9728 metadata names."""
    async with discovery.client(DISCOVERY_TIMEOUT) as http:
        found, _ = await discovery.first_found(http, [u for u, _ in discovery.prm_locations(url)])
        if found is None or found.document is None:
            return None, None
        servers = found.document.get("authorization_servers")
        scopes = found.document.get("scopes_supported")
        scope = " ".join(s for s in scopes if isinstance(s, str)) if isinstance(scopes, list) else None
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            return None, scope
        meta, _ = await discovery.authorization_server_metadata(http, servers[0])
        issuer = meta.document.get("issuer") if meta is not None and meta.document else None
        return (issuer if isinstance(issuer, str) else servers[0]), scope
