"""The UW semantic digest, as the harness recomputes it (UWMD-RES-012, SCOPE-001).

The binding's ETag is the quoted semantic digest: `sha256:` + SHA-256 of the RFC 8785 (JCS) form of the
envelope without `generated_at`, `generator` and `semantic_digest`. The harness recomputes it from the
bytes a server sends, so it is the oracle: the JCS text comes from the core's one implementation
(`conformance.pack_api.jcs`), written apart from the reference server's (`conformance_reference/uwmd_codecs/`)
so
that one bug cannot make both agree. The project's tests pin it to the catalog's Parkview digest
(sha256:98cf81a8...9fb7) and to the digest vectors in `vectors/uwmd/`.
"""

from __future__ import annotations

from typing import Any, Final

from conformance.pack_api import CanonicalError, sha256_hex

__all__ = ["VOLATILE", "CanonicalError", "semantic_digest"]

#: Members of the envelope the semantic digest leaves out: they change on every render.
VOLATILE: Final = frozenset({"generated_at", "generator", "semantic_digest"})


def semantic_digest(envelope: dict[str, Any]) -> str:
    """`sha256:` + hex SHA-256 of the JCS UTF-8 bytes of the envelope without its volatile members."""
    return "sha256:" + sha256_hex({key: value for key, value in envelope.items() if key not in VOLATILE})
