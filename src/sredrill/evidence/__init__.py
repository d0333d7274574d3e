"""Evidence: the backends over one scenario (`full`, `selective`, `temporal`) and the RCA toolset agents call.

An agent never reads fixture files (DESIGN §3). It calls tools on an `RcaToolset` built for its run from one
scenario and one `BackendMode`; the toolset keeps an audit log of what it answered, which grading reads.

Examples:
    >>> from sredrill.scenarios import load_pack
    >>> from sredrill.evidence import BackendMode, RcaToolset
    >>> pack = load_pack("rds_postgres")
    >>> tools = RcaToolset(pack.scenarios[0], BackendMode.SELECTIVE, vocabulary=pack.vocabulary)
    >>> [s.name for s in tools.specs()][:3]
    ['get_alert', 'list_metrics', 'query_metrics']
"""

from __future__ import annotations

from sredrill.evidence.audit import AuditEntry
from sredrill.evidence.modes import BackendMode
from sredrill.evidence.specs import EVIDENCE_SOURCES, TOOL_NAMES, TRAJECTORY_ACTIONS, sources_of, tool_specs
from sredrill.evidence.toolset import RcaToolset, ScenarioEvidence

# Plain `sorted()` order, as tests/test_public_api.py checks; ruff's isort-style order would put the
# constants first.
__all__ = [  # noqa: RUF022
    "AuditEntry",
    "BackendMode",
    "EVIDENCE_SOURCES",
    "RcaToolset",
    "ScenarioEvidence",
    "TOOL_NAMES",
    "TRAJECTORY_ACTIONS",
    "sources_of",
    "tool_specs",
]
