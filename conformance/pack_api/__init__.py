"""The pack API: everything a pack may import from the core, and nothing else.

A pack (the code's one word for what the CLI's `--suite` names: a package registered under the
entry-point group `mcp_conformance.suites`) imports only this module from `conformance`; an
import-linter contract (`pyproject.toml`) and `tests/pack_api/test_pack_api.py` keep it so. What is
here is the contract the core keeps for pack authors: a name listed in `__all__` keeps its meaning and
signature (new keyword arguments with defaults may be added); what is not here may change without
notice. A pack may import its own modules, never another room of the core; packs are independent of
one another, except that this repository's fuzz and official-fixture packs read the base pack's helpers
(one distribution, versioned together: `docs/ARCHITECTURE.md`).

The names load lazily (PEP 562): a pack's declaration (`from conformance.pack_api import Pack`) imports
`conformance.model.packs` only, so listing packs stays cheap; a check module's imports pull in what
they name.

The names, by the job they do in a pack:

- **Declaring the pack**: `Pack`, `PackOption` (one `PACK` value in the package's `__init__.py`); the
  hooks a `Pack` names as `module:function` are typed by `PrepareHook` and `ReferenceSetupHook`.
- **Writing checks**: `check` registers an async function `(ctx: CaseContext) -> None` against one
  requirement ID; `CaseContext` is all a check sees of the run (the session, the target, the options,
  `remember_once`/`guard` memory, the revision, `case_key`). `profile_checks` builds a profile's
  `check` decorator.
- **Ending a check**: return for PASS, or call `missed` (FAIL or WARN by the row's level, decided by the
  runner), `weak` (WARN), `skip` (SKIP with a reason), `blocked` (SKIP naming the case that judges the
  defect), `unjudgeable` (ERROR: nothing could be observed). `Outcome` is their common base (the one
  `Outcome` of the code); `Skipped` and `Blocked` are the SKIPs a check may catch. `Evidence` is the
  typed shape of what an outcome carries (the keyword arguments of `missed`, `weak`, `unjudgeable`).
- **Transport failures** a check may catch when a hang or a broken connection is its finding:
  `TransportError` and its kinds, `NotSent`, `ProbeUnanswered` (a probe and the sentinel after it
  both unanswered on a stream); `recorded_violations(ctx)` is what the transport's judging
  check reads (the answers earlier cases met that broke a transport rule: `Pack.transport_judges`).
- **Speaking MCP**: `Session`, `Call`, `Probe`, `result_of`, `jsonrpc` (error codes, `request`,
  `notification`, `encode`, `classify`), the revision constants and helpers of `versions`, client input
  (`ClientInput`, sampling/elicitation features), `read_only` (a tool annotated `readOnlyHint`).
- **Judging shapes**: `shape_errors` (a message against the revision's published schema), `schema`,
  `schema_errors`, `schema_registry`, `meta` (a server's tool schemas), `EcmaDraft202012Validator`.
- **Profile helpers**: `load_vectors` (a pack's golden vectors, validated), `Reply`/`classified` (a
  profile call read by the catalog's C-1 rules into a `Classification`), `sha256_hex`/`CanonicalError`
  (RFC 8785 digests), `bytes_text`.
- **Arguments and fixtures**: `paced`/`Paced` (calls sized to what they must show), `candidates` and
  `drawing` (careful valid arguments for a tool), the strategy builder for fuzzing,
  `Fixtures`/`fixtures`/`optional_fixtures` (data a target file provides).
- **Tokens**: `mint`, `new_key`, `token_set`, `load_authority_key`, `ALGORITHM` for auth packs.
- **Judging an authorization server** (a pack with `side="authorization-server"`):
  `issuer_check` registers an async function `(ctx: IssuerContext) -> None`; `IssuerContext` is the
  issuer, the settings, recorded HTTP (`ctx.http`, answering an `IssuerExchange`) and the revision's
  shared facts (`remember_once`).
- **Judging clients** (a pack with `side="client"`: docs/client.md): `Scenario` (the server a client
  meets, registered with `scenario`), `Peer` (the way back to the client: `ask`, `event`, `close`),
  `Refusal` and `NO_ANSWER` (answers other than a result), `HttpAnswer` (an HTTP answer of the
  scenario's own: `Scenario.on_http`), `client_check` and `ClientContext` (a check
  reading what the client sent: `Recording`, `Message`, `Arrival`), `EVERY_SCENARIO` (the contract
  check's scenario).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the names are, for readers and type checkers; `_WHERE` loads them when used
    from conformance.adapters.base import (
        TransportClosed,
        TransportError,
        TransportTimeout,
        TransportViolation,
    )
    from conformance.arguments.candidates import candidates, drawing
    from conformance.arguments.home import hypothesis_home
    from conformance.arguments.pacing import Paced, paced
    from conformance.arguments.strategies import Model, Mutation, Unsupported, build
    from conformance.clients.checks import EVERY_SCENARIO, ClientContext, client_check, scenario
    from conformance.clients.scenario import NO_ANSWER, HttpAnswer, Peer, Refusal, Scenario
    from conformance.clients.wire import Arrival, Message, Recording
    from conformance.engine.blocking import recorded as recorded_violations
    from conformance.engine.checks import (
        Blocked,
        CheckFunc,
        Evidence,
        Outcome,
        Skipped,
        blocked,
        check,
        missed,
        profile_checks,
        skip,
        unjudgeable,
        weak,
    )
    from conformance.engine.context import CaseContext
    from conformance.engine.issuer import Exchange as IssuerExchange
    from conformance.engine.issuer import IssuerContext, issuer_check
    from conformance.engine.policy import read_only
    from conformance.fixtures.context import Fixtures, fixtures, optional_fixtures
    from conformance.infra.authority import ALGORITHM, mint, new_key, token_set
    from conformance.infra.authority import load_key as load_authority_key
    from conformance.model.packs import Pack, PackOption, PrepareHook, ReferenceSetupHook
    from conformance.model.targets import Target
    from conformance.model.vectors import load as load_vectors
    from conformance.pack_api.jcs import CanonicalError, sha256_hex
    from conformance.pack_api.replies import Reply, classified
    from conformance.pack_api.statuses import Classification
    from conformance.protocol import jsonrpc, versions
    from conformance.protocol.client_input import (
        DEFAULT_FEATURES,
        ELICITATION,
        FIRST_INPUT_MODES,
        INPUT_METHODS,
        SAMPLING,
        ClientInput,
        ServerAsk,
        capabilities_for,
        parse_features,
    )
    from conformance.protocol.jsonrpc import Frame, classify
    from conformance.protocol.session import (
        CLIENT_INFO,
        NO_RESPONSE,
        Call,
        HandshakeFailed,
        NotSent,
        Probe,
        ProbeUnanswered,
        Session,
        probe_grace,
        result_of,
    )
    from conformance.protocol.versions import (
        BATCH_REVISIONS,
        FIRST_DEFAULT_DIALECT,
        FIRST_STRUCTURED_OUTPUT,
        FIRST_TOOL_ANNOTATIONS,
        FIRST_TOOL_NAME_RULES,
        LEGACY_REVISIONS,
        META_CLIENT_CAPABILITIES,
        META_PROTOCOL_VERSION,
        MODERN_REVISIONS,
        TESTED_REVISIONS,
        at_least,
        era_of,
        is_known,
        since,
    )
    from conformance.schemas import SHAPES_ID, meta, shape_errors, shape_name
    from conformance.schemas import errors as schema_errors
    from conformance.schemas import registry as schema_registry
    from conformance.schemas import schema as schema
    from conformance.schemas.ecma_regex import EcmaDraft202012Validator
    from conformance.text import bytes_text


def _names(module: str, *names: str) -> dict[str, tuple[str, str]]:
    return {name: (module, name) for name in names}


#: Where each name of the API lives: name -> (module, attribute there; "" for the module itself).
#: `tests/pack_api/test_pack_api.py` holds it equal to the TYPE_CHECKING imports above and to `__all__`.
_WHERE: dict[str, tuple[str, str]] = {
    **_names(
        "conformance.adapters.base",
        "TransportClosed",
        "TransportError",
        "TransportTimeout",
        "TransportViolation",
    ),
    **_names("conformance.arguments.candidates", "candidates", "drawing"),
    **_names("conformance.arguments.home", "hypothesis_home"),
    **_names("conformance.arguments.pacing", "Paced", "paced"),
    **_names("conformance.arguments.strategies", "Model", "Mutation", "Unsupported", "build"),
    **_names("conformance.infra.authority", "ALGORITHM", "mint", "new_key", "token_set"),
    **_names("conformance.clients.checks", "EVERY_SCENARIO", "ClientContext", "client_check", "scenario"),
    **_names("conformance.clients.scenario", "NO_ANSWER", "HttpAnswer", "Peer", "Refusal", "Scenario"),
    **_names("conformance.clients.wire", "Arrival", "Message", "Recording"),
    "load_authority_key": ("conformance.infra.authority", "load_key"),
    "recorded_violations": ("conformance.engine.blocking", "recorded"),
    **_names(
        "conformance.engine.checks",
        "Blocked",
        "CheckFunc",
        "Evidence",
        "Outcome",
        "Skipped",
        "blocked",
        "check",
        "missed",
        "profile_checks",
        "skip",
        "unjudgeable",
        "weak",
    ),
    **_names("conformance.engine.context", "CaseContext"),
    **_names("conformance.engine.issuer", "IssuerContext", "issuer_check"),
    "IssuerExchange": ("conformance.engine.issuer", "Exchange"),
    **_names("conformance.engine.policy", "read_only"),
    **_names("conformance.fixtures.context", "Fixtures", "fixtures", "optional_fixtures"),
    **_names("conformance.pack_api.jcs", "CanonicalError", "sha256_hex"),
    **_names("conformance.model.packs", "Pack", "PackOption", "PrepareHook", "ReferenceSetupHook"),
    "jsonrpc": ("conformance.protocol.jsonrpc", ""),
    "versions": ("conformance.protocol.versions", ""),
    **_names(
        "conformance.protocol.client_input",
        "DEFAULT_FEATURES",
        "ELICITATION",
        "FIRST_INPUT_MODES",
        "INPUT_METHODS",
        "SAMPLING",
        "ClientInput",
        "ServerAsk",
        "capabilities_for",
        "parse_features",
    ),
    **_names("conformance.protocol.jsonrpc", "Frame", "classify"),
    **_names(
        "conformance.protocol.session",
        "CLIENT_INFO",
        "NO_RESPONSE",
        "Call",
        "HandshakeFailed",
        "NotSent",
        "Probe",
        "ProbeUnanswered",
        "Session",
        "probe_grace",
        "result_of",
    ),
    **_names(
        "conformance.protocol.versions",
        "BATCH_REVISIONS",
        "FIRST_DEFAULT_DIALECT",
        "FIRST_STRUCTURED_OUTPUT",
        "FIRST_TOOL_ANNOTATIONS",
        "FIRST_TOOL_NAME_RULES",
        "LEGACY_REVISIONS",
        "META_CLIENT_CAPABILITIES",
        "META_PROTOCOL_VERSION",
        "MODERN_REVISIONS",
        "TESTED_REVISIONS",
        "at_least",
        "era_of",
        "is_known",
        "since",
    ),
    **_names("conformance.pack_api.replies", "Reply", "classified"),
    **_names("conformance.schemas", "SHAPES_ID", "shape_errors", "shape_name", "schema"),
    "meta": ("conformance.schemas.meta", ""),
    "schema_errors": ("conformance.schemas", "errors"),
    "schema_registry": ("conformance.schemas", "registry"),
    **_names("conformance.schemas.ecma_regex", "EcmaDraft202012Validator"),
    **_names("conformance.pack_api.statuses", "Classification"),
    **_names("conformance.model.targets", "Target"),
    **_names("conformance.text", "bytes_text"),
    "load_vectors": ("conformance.model.vectors", "load"),
}

__all__ = [
    "ALGORITHM",
    "BATCH_REVISIONS",
    "CLIENT_INFO",
    "DEFAULT_FEATURES",
    "ELICITATION",
    "EVERY_SCENARIO",
    "FIRST_DEFAULT_DIALECT",
    "FIRST_INPUT_MODES",
    "FIRST_STRUCTURED_OUTPUT",
    "FIRST_TOOL_ANNOTATIONS",
    "FIRST_TOOL_NAME_RULES",
    "INPUT_METHODS",
    "LEGACY_REVISIONS",
    "META_CLIENT_CAPABILITIES",
    "META_PROTOCOL_VERSION",
    "MODERN_REVISIONS",
    "NO_ANSWER",
    "NO_RESPONSE",
    "SAMPLING",
    "SHAPES_ID",
    "TESTED_REVISIONS",
    "Arrival",
    "Blocked",
    "Call",
    "CanonicalError",
    "CaseContext",
    "CheckFunc",
    "Classification",
    "ClientContext",
    "ClientInput",
    "EcmaDraft202012Validator",
    "Evidence",
    "Fixtures",
    "Frame",
    "HandshakeFailed",
    "HttpAnswer",
    "IssuerContext",
    "IssuerExchange",
    "Message",
    "Model",
    "Mutation",
    "NotSent",
    "Outcome",
    "Paced",
    "Pack",
    "PackOption",
    "Peer",
    "PrepareHook",
    "Probe",
    "ProbeUnanswered",
    "Recording",
    "ReferenceSetupHook",
    "Refusal",
    "Reply",
    "Scenario",
    "ServerAsk",
    "Session",
    "Skipped",
    "Target",
    "TransportClosed",
    "TransportError",
    "TransportTimeout",
    "TransportViolation",
    "Unsupported",
    "at_least",
    "blocked",
    "build",
    "bytes_text",
    "candidates",
    "capabilities_for",
    "check",
    "classified",
    "classify",
    "client_check",
    "drawing",
    "era_of",
    "fixtures",
    "hypothesis_home",
    "is_known",
    "issuer_check",
    "jsonrpc",
    "load_authority_key",
    "load_vectors",
    "meta",
    "mint",
    "missed",
    "new_key",
    "optional_fixtures",
    "paced",
    "parse_features",
    "probe_grace",
    "profile_checks",
    "read_only",
    "recorded_violations",
    "result_of",
    "scenario",
    "schema",
    "schema_errors",
    "schema_registry",
    "sha256_hex",
    "shape_errors",
    "shape_name",
    "since",
    "skip",
    "token_set",
    "unjudgeable",
    "versions",
    "weak",
]


def __getattr__(name: str) -> Any:
    """Import the module that holds `name` the first time a pack asks for it (PEP 562)."""
    try:
        module, attribute = _WHERE[name]
    except KeyError:
        raise AttributeError(
            f"module {__name__!r} has no attribute {name!r} (not part of the pack API)"
        ) from None
    found = importlib.import_module(module)
    value = getattr(found, attribute) if attribute else found
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
