"""The scenario domains: one folder each (`rds/`), every one a `Domain` declaration (`scenarios.domain`).

A domain's package holds its evidence sources and record models, its tools (each declared once) and the server
that answers them, its failure-mode vocabulary as data, its prompt, lint and blinding rules and evidence
views. It is registered by name in `scenarios.domain.DOMAINS`; the core imports it only through that registry.
See docs/domains.md.
"""

__all__: list[str] = []
