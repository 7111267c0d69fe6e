"""Tool arguments built from a tool's inputSchema, for every pack that calls tools.

One compiler (`compiler.py`), generation of valid values (`generate.py`) and of one-rule-broken ones for
the fuzz pack (`mutate.py`), joined in one `Model` (`strategies.py`), and the few careful, derandomized
candidates the base pack sends (`candidates.py`).
"""
