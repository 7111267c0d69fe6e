"""Helpers for the MAP tests: the shared stateful-profile helpers bound to the MAP review programs."""

from __future__ import annotations

from tests.profile_helpers import MODERN, StatefulProfile, cases, non_pass

PROFILE = StatefulProfile.of("map-review", "map")
SUITE = PROFILE.suite
CONTROLLER = PROFILE.controller_argv
#: The three decision races: the costly checks (N racer processes each over stdio).
DECISION_RACES = ("map-review.race.approve-2", "map-review.race.approve-8", "map-review.race.mixed")

target = PROFILE.target
checks = PROFILE.checks
run = PROFILE.run
run_many = PROFILE.run_many

__all__ = [
    "CONTROLLER",
    "DECISION_RACES",
    "MODERN",
    "PROFILE",
    "SUITE",
    "cases",
    "checks",
    "non_pass",
    "run",
    "run_many",
    "target",
]
