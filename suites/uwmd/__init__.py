"""The UW Markdown MCP binding 1.0 suite (seed 002): deal resources, the five uwmd tools, results,
errors, If-Match and its races, and security probes.

Importing it registers its checks in report order: the tool surface, resources, tools, result placement,
errors, concurrency (the races last of it), then the security probes (hostile inputs last, since a server
they break takes the later rows of its target with it).
"""

from suites.uwmd import surface, resources, tools, results, errors, concurrency, security  # noqa: F401, I001
