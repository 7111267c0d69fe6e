"""The MAP publication-approval review suite (seed 000): read_review and decide_review.

Importing it registers its checks in report order: the tool surface, reads, digests, decisions, then
races and the seed's golden p7 exchange last (the exchange resets the service's state).
"""

from suites.map_review import surface, read, digest, decide, races, golden  # noqa: F401, I001
