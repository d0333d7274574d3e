"""Evidence: the backends over one scenario (`full`, `selective`, `temporal`) and the RCA toolset agents call.

An agent never reads fixture files (DESIGN §3). It calls tools on an `RcaToolset` built for its run from one
scenario and one `BackendMode`; the tools are the scenario's domain's (`scenarios.domain`), answered by the
domain's server (`evidence.serving`). The toolset keeps an audit log of what it answered, which grading reads.

Examples:
    >>> from sredrill.scenarios import load_pack
    >>> from sredrill.evidence import BackendMode, RcaToolset
    >>> pack = load_pack("rds_postgres")
    >>> tools = RcaToolset(pack.scenarios[0], BackendMode.SELECTIVE, vocabulary=pack.vocabulary)
    >>> [s.name for s in tools.specs()][:1]
    ['get_alert']
"""

from __future__ import annotations

from sredrill.evidence.audit import AuditEntry
from sredrill.evidence.items import Point, ServedItem, item_id, merge_items
from sredrill.evidence.modes import BackendMode
from sredrill.evidence.serving import CallContext, DomainServer, ToolAnswer
from sredrill.evidence.specs import tool_specs
from sredrill.evidence.toolset import RcaToolset, ScenarioEvidence

__all__ = [
    "AuditEntry",
    "BackendMode",
    "CallContext",
    "DomainServer",
    "Point",
    "RcaToolset",
    "ScenarioEvidence",
    "ServedItem",
    "ToolAnswer",
    "item_id",
    "merge_items",
    "tool_specs",
]
