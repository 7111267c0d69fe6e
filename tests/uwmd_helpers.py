"""Helpers for the UWMD tests: the shared stateful-profile helpers bound to the UW Markdown programs."""

from __future__ import annotations

from tests.profile_helpers import MODERN, StatefulProfile, cases, non_pass

PROFILE = StatefulProfile.of("uwmd", "uwmd")
SUITE = PROFILE.suite
#: The checks that cost more than the rest together: racer processes, second-principal sessions, the
#: one-second wait of CONC-007. A mutant run includes them only when its defect is about them.
COSTLY = (
    "uwmd.conc.race-2",
    "uwmd.conc.race-8",
    "uwmd.conc.digest-stable",
    "uwmd.sec.deal-authz",
    "uwmd.sec.representation-authz",
    "uwmd.sec.link-replay",
)

target = PROFILE.target
checks = PROFILE.checks
run = PROFILE.run
run_many = PROFILE.run_many

__all__ = ["COSTLY", "MODERN", "PROFILE", "SUITE", "cases", "checks", "non_pass", "run", "run_many", "target"]
