"""Example agents, one per connector: `py:` (echo_agent), `cmd:` with JSON lines (script_agent), plain text."""
