"""Front ends: the CLI, the pytest plugin, the snapshot extension, the programmatic API."""
