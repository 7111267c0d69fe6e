"""The transport failures a check may catch, re-exported so packs never import the adapters.

A check that treats a hang or a broken connection as the finding itself (a hostile probe, a fuzz input,
a sweep that leaves a slow tool unjudged) catches these; every other check lets them propagate, and the
runner reports the case ERROR with the adapter's evidence.
"""

from __future__ import annotations

from conformance.adapters.base import TransportClosed, TransportError, TransportTimeout, TransportViolation
from conformance.protocol.session import NotSent

__all__ = ["NotSent", "TransportClosed", "TransportError", "TransportTimeout", "TransportViolation"]
