"""The MCP base-protocol suite. Importing it registers its checks in report order.

stdio hygiene comes last because it judges everything the server wrote to stdout before it.
"""

from suites.base import lifecycle, rpc, tools, resources, hygiene, http, stdio  # noqa: F401, I001
