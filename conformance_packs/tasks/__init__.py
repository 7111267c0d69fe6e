"""The tasks extension suite: the 2026-07-28 tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`)
as a black-box client sees it.

Every row is an extension row (`track: "extension"`): shown with its true verdict, and failing a run
only when claimed, by naming this suite (`--suite tasks`) or with `--experimental`. A server that does
not declare the extension in server/discover has every row SKIP for that one reason, nothing sent.
"""

from conformance.pack_api import Pack

PACK = Pack(
    name="tasks",
    package=__name__,
    description="The 2026-07-28 tasks extension (io.modelcontextprotocol/tasks, SEP-2663)",
    checks=(f"{__name__}.checks",),
    reference="conformance_reference.tasks_server",
    reference_forkserver="conformance_reference.forkserver",
    since="2026-07-28",
    order=50,
)
