"""The model: verdicts, requirement rows, targets, packs and their vectors."""
