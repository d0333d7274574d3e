"""The RDS scenario generator (`GENERATOR`, version `rds-3`): scenarios from a causal fault model.

Each scenario is an ordinary RDS scenario folder (`scenario.yml`, `alert.json`, `answer.yml` and the four
evidence files) for one account's fleet: a primary, its read replica and two unrelated instances, three hours of
CloudWatch metrics at one minute, RDS events, Performance Insights and the PostgreSQL log. Faults, confounders,
missing metrics, recovered incidents and two-fault scenarios follow docs/generator.md; the answer key is derived
from what was injected. The same spec gives the same bytes; scenario `i` depends only on the seed and `i`.

Examples:
    >>> from sredrill.generate import GenerateSpec, generate
    >>> first = next(generate(GenerateSpec(domain="rds", seed=7, count=1)))
    >>> first.folder.startswith("000-"), "answer.yml" in first.files
    (True, True)
"""

from __future__ import annotations

from .catalog import FLOORS
from .compose import VERSION
from .confounders import CONFOUNDER_METRICS
from .faults import FAULT_METRICS
from .generator import GENERATOR, MODES, RdsGenerator
from .series import anomaly_score

__all__ = [
    "CONFOUNDER_METRICS",
    "FAULT_METRICS",
    "FLOORS",
    "GENERATOR",
    "MODES",
    "VERSION",
    "RdsGenerator",
    "anomaly_score",
]
