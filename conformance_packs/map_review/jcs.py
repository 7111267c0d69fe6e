"""The MAP contract digest: `sha-256:` + SHA-256 of the contract's RFC 8785 (JCS) form.

MAP Core identifies a contract by that digest. The harness recomputes it for a contract file a target
supplies (MAP-DIG-005, MAP-READ-006); the JCS text itself comes from the core's one implementation
(`conformance.pack_api.jcs`), so every pack canonicalises alike. The `sha-256:` spelling is MAP's own rule.
The project's tests pin it to the one published contract revision (sha-256:247dc852...0c5b).
"""

from __future__ import annotations

from typing import Any

from conformance.pack_api import sha256_hex


def digest(value: Any) -> str:
    """`sha-256:` + the lower-case hex SHA-256 of the value's JCS UTF-8 bytes (the MAP spelling)."""
    return "sha-256:" + sha256_hex(value)
