"""The MCP Apps suite (`io.modelcontextprotocol/ui`, SEP-1865; the ext-apps specification, Stable
2026-01-26): the extension declared, UI tools shown only to a client that negotiated Apps, the text-only
fallback, tool-to-resource links, the UI resource's MIME type, content and `_meta.ui`, tool visibility and
the deprecated flat key.

Every row is `track: "extension"`: a run shows its true verdict but fails on it only when the user claims
the extension (`--suite apps`, or `--experimental`). The pack runs by default on a server the user names
(`default_for_servers`): one tools/list and one resources/list per revision, which the base suite shares,
tell a server with no UI (every row SKIP, nothing more sent) from an Apps server, whose authors see the
result unscored without knowing to ask for it.
"""

from conformance.pack_api import Pack

PACK = Pack(
    name="apps",
    package=__name__,
    description="MCP Apps extension (io.modelcontextprotocol/ui, ext-apps 2026-01-26): UI tools, resources",
    checks=(f"{__name__}.checks",),
    reference="conformance_reference.apps_server",
    reference_forkserver="conformance_reference.forkserver",
    # Tool `_meta` (where the UI link lives) is in the schema from 2025-06-18 on; the SDKs drop it before.
    since="2025-06-18",
    default_for_servers=True,
    revisions_side_by_side=True,
    extension="io.modelcontextprotocol/ui",
    order=40,
)
