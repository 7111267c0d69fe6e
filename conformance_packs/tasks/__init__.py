"""The tasks extension suite: the 2026-07-28 tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`)
as a black-box client sees it.

Every row is an extension row (`track: "extension"`): shown with its true verdict, and failing a run
only when claimed, by naming this suite (`--suite tasks`) or with `--experimental`. The pack runs by
default on a server the user names (`default_for_servers`), because it costs nothing there: a server
that does not declare the extension in server/discover has every row SKIP for that one reason, nothing
sent; one that does is judged, unscored, without its authors knowing to ask.
"""

from conformance.pack_api import Pack

PACK = Pack(
    name="tasks",
    package=__name__,
    description="The 2026-07-28 tasks extension (io.modelcontextprotocol/tasks, SEP-2663)",
    checks=(f"{__name__}.checks",),
    reference="conformance_reference.tasks_server",
    reference_forkserver="conformance_reference.forkserver",
    # The extension is defined for 2026-07-28 on ("This extension is not defined under the 2025-11-25
    # protocol version").
    since="2026-07-28",
    default_for_servers=True,
    revisions_side_by_side=True,
    extension="io.modelcontextprotocol/tasks",
    order=50,
)
