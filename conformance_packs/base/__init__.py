"""The MCP base-protocol suite. Its check modules, in report order.

stdio hygiene comes last because it judges everything the server wrote to stdout before it.
"""

from conformance.packs import Pack

PACK = Pack(
    name="base",
    package=__name__,
    description="MCP base protocol: JSON-RPC envelope, lifecycle, tools, resources, HTTP rules",
    checks=tuple(
        f"{__name__}.{module}"
        for module in (
            "lifecycle",
            "rpc",
            "tools",
            "resources",
            "resource_reads",
            "subscriptions",
            "progress",
            "hygiene",
            "http",
            "stdio",
        )
    ),
    reference="conformance_reference.base_server",
    default_for_servers=True,
    order=0,
)
