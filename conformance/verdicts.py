"""The one verdict module: the verdicts, which of them fail a run, and the exit codes.

Every place that turns verdicts into a decision (the runner, baselines, the pytest plugin, badges,
diff, the exit code) reads it from here.
"""

from __future__ import annotations

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNREACHABLE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
