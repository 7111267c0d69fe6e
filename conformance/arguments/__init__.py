"""Tool arguments built from a tool's inputSchema, for every suite that calls tools.

One compiler and one set of hypothesis strategies (`strategies.py`): valid and one-rule-broken
arguments for the fuzz suite, and the few careful candidates the base suite sends (`candidates.py`).
"""
