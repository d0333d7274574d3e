"""Connectors: one module per agent transport."""
