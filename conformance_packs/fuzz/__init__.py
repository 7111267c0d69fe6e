"""The fuzz suite: hypothesis inputs built from each callable tool's own inputSchema, valid and invalid.

Its checks run in report order: valid inputs first (their exploration runs once and serves both valid
checks), then invalid inputs, then error hygiene over both.
"""

from conformance.pack_api import Pack, PackOption
from conformance_packs.fuzz import options

PACK = Pack(
    name="fuzz",
    package=__name__,
    description="Property-based fuzzing of every callable tool from its own inputSchema (hypothesis)",
    checks=(f"{__name__}.checks",),
    reference="conformance_reference.base_server",
    reference_forkserver="conformance_reference.forkserver",
    options=(
        PackOption(
            "--fuzz-examples",
            "fuzz_examples",
            "fuzz suite: inputs per tool and mode (default 100)",
            options.positive_int,
            100,
            "N",
        ),
        PackOption(
            "--fuzz-seed",
            "fuzz_seed",
            "fuzz suite: generator seed (default: drawn and recorded in the report)",
            int,
            None,
            "N",
            settle=options.seed,
            seed=True,
        ),
        PackOption(
            "--fuzz-budget",
            "fuzz_budget",
            "fuzz suite: wall-clock seconds per target (default 60)",
            options.positive_float,
            60.0,
            "S",
        ),
        PackOption(
            "--fuzz-replay",
            "fuzz_replay",
            "fuzz suite: send exactly this recorded case once (JSON: tool, mode, arguments)",
            options.replay,
            None,
            "JSON",
        ),
    ),
    order=40,
)
