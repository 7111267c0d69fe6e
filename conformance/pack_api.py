"""The pack API: everything a pack may import from the core, and nothing else.

A pack (a suite: the two words name one thing, a package registered under the entry-point group
`mcp_conformance.suites`) imports only this module from `conformance`; an import-linter contract and
`tests/test_pack_api.py` keep it so. What is here is the contract the core keeps for pack authors;
what is not here may change without notice.

The names, by the job they do in a pack:

- **Declaring the pack**: `Pack`, `PackOption` (one `PACK` value in the package's `__init__.py`).
- **Writing checks**: `check` registers an async function `(ctx: CaseContext) -> None` against one
  requirement ID; `CaseContext` is all a check sees of the run (the session, the target, the options,
  `once`/`guard` memory, the revision). `profile_checks` lists a pack's registered checks.
- **Ending a check**: return for PASS, or call `missed` (FAIL or WARN by the row's level, decided by the
  runner), `weak` (WARN), `skip` (SKIP with a reason), `blocked` (SKIP naming the case that judges the
  defect), `unjudgeable` (ERROR: nothing could be observed). `Outcome` is their common base;
  `Skipped` and `Blocked` are the SKIPs a check may catch.
- **Transport failures** a check may catch when a hang or a broken connection is its finding:
  `TransportError` and its kinds, `NotSent`.
- **Speaking MCP**: `Session`, `Call`, `Probe`, `result_of`, `jsonrpc` (error codes, `request`,
  `notification`, `encode`, `classify`), the revision constants and helpers of `versions`, client input
  (`ClientInput`, sampling/elicitation features).
- **Judging shapes**: `shape_errors` (a message against the revision's published schema), `schema`,
  `schema_errors`, `meta` (a server's tool schemas), `EcmaDraft202012Validator`.
- **Profile helpers**: `load_vectors` (a pack's golden vectors, validated), `Reply`/`classified` (a
  profile call read by its outcome), `sha256_hex`/`CanonicalError` (RFC 8785 digests), `bytes_text`.
- **Arguments and fixtures**: `paced`/`Paced` (calls sized to what they must show), the strategy
  builder for fuzzing, `Fixtures`/`fixtures`/`optional_fixtures` (data a target file provides).
- **Tokens**: `mint`, `new_key`, `token_set`, `load_authority_key`, `ALGORITHM` for auth packs.
"""

from __future__ import annotations

from conformance import schemas as _schemas
from conformance import vectors as _vectors
from conformance.arguments.home import hypothesis_home
from conformance.arguments.pacing import Paced, paced
from conformance.arguments.strategies import Model, Mutation, Unsupported, build
from conformance.authority import ALGORITHM, mint, new_key, token_set
from conformance.authority import load_key as load_authority_key
from conformance.engine.api import (
    NotSent,
    TransportClosed,
    TransportError,
    TransportTimeout,
    TransportViolation,
)
from conformance.engine.checks import (
    Blocked,
    CheckFunc,
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
from conformance.fixtures.context import Fixtures, fixtures, optional_fixtures
from conformance.jcs import CanonicalError, sha256_hex
from conformance.packs import Pack, PackOption
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
    Probe,
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
from conformance.replies import Reply, classified
from conformance.schemas import SHAPES_ID, meta, shape_errors, shape_name
from conformance.schemas.ecma_regex import EcmaDraft202012Validator
from conformance.targets import Target
from conformance.text import bytes_text

#: A pack's golden vectors by file name, validated against the vector-file envelope and the pack's schema.
load_vectors = _vectors.load
#: The published JSON Schema registered under an `$id` (the core's or any installed pack's).
schema = _schemas.schema
#: At most `limit` one-line errors of an instance against a schema `$id` (and one of its definitions).
schema_errors = _schemas.errors

__all__ = [
    "ALGORITHM",
    "BATCH_REVISIONS",
    "CLIENT_INFO",
    "DEFAULT_FEATURES",
    "ELICITATION",
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
    "NO_RESPONSE",
    "SAMPLING",
    "SHAPES_ID",
    "TESTED_REVISIONS",
    "Blocked",
    "Call",
    "CanonicalError",
    "CaseContext",
    "CheckFunc",
    "ClientInput",
    "EcmaDraft202012Validator",
    "Fixtures",
    "Frame",
    "HandshakeFailed",
    "Model",
    "Mutation",
    "NotSent",
    "Outcome",
    "Paced",
    "Pack",
    "PackOption",
    "Probe",
    "Reply",
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
    "capabilities_for",
    "check",
    "classified",
    "classify",
    "era_of",
    "fixtures",
    "hypothesis_home",
    "is_known",
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
    "result_of",
    "schema",
    "schema_errors",
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

# for the apps pack
from conformance.arguments.candidates import candidates  # noqa: E402

__all__ += ["candidates"]
