"""Examples you can copy; a package so `--agent py:examples.agents.echo_agent:agent` imports from the root."""
