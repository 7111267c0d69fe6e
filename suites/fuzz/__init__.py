"""The fuzz suite: hypothesis inputs built from each callable tool's own inputSchema, valid and invalid.

Importing it registers its checks in report order: valid inputs first (their exploration runs once and
serves both valid checks), then invalid inputs, then error hygiene over both.
"""

from suites.fuzz import checks  # noqa: F401
