"""Connectors: one module per agent transport."""

__all__: list[str] = []
