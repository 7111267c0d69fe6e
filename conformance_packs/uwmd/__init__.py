"""The UW Markdown MCP binding 1.0 suite (seed 002): deal resources, the five uwmd tools, results,
errors, If-Match and its races, and security probes.

Its check modules, in report order: the tool surface, resources, tools, result placement,
errors, concurrency (the races last of it), then the security probes (hostile inputs last, since a server
they break takes the later rows of its target with it).
"""

from conformance.pack_api import Pack

PACK = Pack(
    name="uwmd",
    package=__name__,
    description="UW Markdown MCP binding 1.0: deal resources, the five uwmd tools, If-Match races, security",
    checks=tuple(
        f"{__name__}.{module}"
        for module in ("surface", "resources", "tools", "results", "errors", "concurrency", "security")
    ),
    reference="conformance_reference.uwmd_server",
    reference_forkserver="conformance_reference.forkserver",
    controller="conformance_reference.uwmd_controller",
    since="2025-06-18",
    settings={"uwmd": "urn:mcp-conformance:uwmd-target:1"},
    order=30,
)
