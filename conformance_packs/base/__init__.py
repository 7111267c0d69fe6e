"""The MCP base-protocol suite. Its check modules, in report order.

stdio hygiene comes last because it judges everything the server wrote to stdout before it.
"""

from conformance.pack_api import Pack, PackOption, parse_features

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
            "liveness",
            "capabilities",
            "pagination",
            "prompts",
            "completion",
            "logs",
            "resource_reads",
            "subscriptions",
            "progress",
            "origin",
            "http_post",
            "sessions",
            "input",
            "tasks",
            "wire",
            "hygiene",
            "http",
            "get_stream",
            "stdio",
        )
    ),
    reference="conformance_reference.base_server",
    reference_forkserver="conformance_reference.forkserver",
    options=(
        PackOption(
            "--client-capabilities",
            "client_capabilities",
            "base suite: the input capabilities the harness declares as a client: all, none, or a comma "
            "list of sampling, sampling.tools, elicitation.form, elicitation.url, roots (default: the "
            "target file's [client] table, else sampling,elicitation.form,roots)",
            parse_features,
            None,
            "LIST",
        ),
    ),
    settings={"client": "urn:mcp-conformance:base-client-target:1"},
    # Over HTTP an answer in a content type other than JSON or SSE is judged once, by this check, run
    # last in each revision; the cases that needed that answer are SKIP blocked by it.
    transport_judges={"http": ("base.http.request-answer", "BASE-HTTP-005")},
    default_for_servers=True,
    revisions_side_by_side=True,
    order=0,
)
