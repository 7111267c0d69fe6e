"""The official fixture pack: what the official conformance suite
(`@modelcontextprotocol/conformance`) asks of the fixture server an SDK implementer writes for it, judged
here on the same fixture: the tools the official scenarios call by name (`test_simple_text`,
`test_image_content`, the SEP-1034 and SEP-1330 elicitation tools, the SEP-2322 multi-round tools, ...)
and the 2020-12 and x-mcp-header tools they list.

Its rows judge the official checks that only that fixture can show (`coverage` lists them as
"fixture-only" before this pack). It runs where it is named (`--suite official-fixture`) and on its own
reference in the embedded default, never unasked on a server, so a server without the fixture sees no
request and no case of it; named on a server that lists no tool of the fixture's names, every case is SKIP
"not applicable" after the one tools/list, nothing more sent.
Calling the fixture's tools follows the one `--call-tools` policy: the official everything-server does
not annotate its tools read-only, so judging its calls takes `--call-tools all`.
"""

from conformance.pack_api import Pack

PACK = Pack(
    name="official-fixture",
    package=__name__,
    description="The official conformance suite's fixture tools, judged when a server offers them",
    checks=(f"{__name__}.content", f"{__name__}.listed", f"{__name__}.input", f"{__name__}.changes"),
    reference="conformance_reference.fixture_server",
    reference_forkserver="conformance_reference.forkserver",
    # The official suite freezes server sets for 2025-11-25 and 2026-07-28 only.
    since="2025-11-25",
    order=60,
)
