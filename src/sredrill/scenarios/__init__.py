"""Scenario packs: the file formats, the loader, the failure-mode vocabulary, lint, blind mode, and the domain seam.

A pack's scenarios belong to one domain (`scenarios.domain`): its declaration says what the evidence files are,
which tools read them, its failure modes, prompt and rules. This package knows no domain.

Examples:
    >>> from sredrill.scenarios import load_pack, lint_pack, blind_alert
    >>> pack = load_pack("rds_postgres")
    >>> [f for f in lint_pack(pack) if f.severity == "error"]
    []
    >>> alert = blind_alert(pack.scenario("001-replication-lag"), pack.vocabulary)
"""

from __future__ import annotations

from sredrill.scenarios.alert import Alert
from sredrill.scenarios.answer import AnswerKey, SourceName
from sredrill.scenarios.blind import (
    BlindAlert,
    PredictiveField,
    alert_names,
    blind_alert,
    find_leaks,
    leak_needles,
    predictive_fields,
    reference_sentences,
)
from sredrill.scenarios.domain import Domain, domain_names, get_domain
from sredrill.scenarios.findings import Finding, Severity
from sredrill.scenarios.lint import lint_pack, lint_scenario
from sredrill.scenarios.loader import builtin_pack_names, load_pack
from sredrill.scenarios.metadata import ScenarioMetadata
from sredrill.scenarios.pack import Pack, Scenario, SourceData, TimeWindow
from sredrill.scenarios.pack_file import PackConfig, PackFailureMode
from sredrill.scenarios.vocabulary import FailureMode, Vocabulary, normalize_keyword, normalize_name

__all__ = [
    "Alert",
    "AnswerKey",
    "BlindAlert",
    "Domain",
    "FailureMode",
    "Finding",
    "Pack",
    "PackConfig",
    "PackFailureMode",
    "PredictiveField",
    "Scenario",
    "ScenarioMetadata",
    "Severity",
    "SourceData",
    "SourceName",
    "TimeWindow",
    "Vocabulary",
    "alert_names",
    "blind_alert",
    "builtin_pack_names",
    "domain_names",
    "find_leaks",
    "get_domain",
    "leak_needles",
    "lint_pack",
    "lint_scenario",
    "load_pack",
    "normalize_keyword",
    "normalize_name",
    "predictive_fields",
    "reference_sentences",
]
