"""The RDS domain's `scenario.yml` keys and its evidence sources (the file stems, DESIGN §3)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from sredrill.scenarios import ScenarioMetadata
from sredrill.scenarios.metadata import Text

__all__ = ["EvidenceSource", "RdsMetadata"]


class EvidenceSource(StrEnum):
    """The evidence files of an RDS scenario, by file stem."""

    CLOUDWATCH_METRICS = "aws_cloudwatch_metrics"
    RDS_EVENTS = "aws_rds_events"
    PERFORMANCE_INSIGHTS = "aws_performance_insights"
    POSTGRESQL_LOG = "aws_rds_postgresql_log"


class RdsMetadata(ScenarioMetadata):
    """`scenario.yml` of an RDS scenario: the shared keys plus the database instance's.

    The model declares every key the original suite's scenario.yml uses (Tracer-Cloud/opensre
    `tests/synthetic/rds_postgres`, commit db65347: schema_version … depends_on, base), so those files load
    unmodified.
    """

    engine: Literal["postgres", "mysql", "aurora-postgres", "aurora-mysql", "mariadb"]
    engine_version: Text
    instance_class: str
    region: str
    db_instance_identifier: str
    db_cluster: str = ""
    available_evidence: list[EvidenceSource] = Field(min_length=1)
    """The evidence sources of the scenario."""
    fleet: list[str] = Field(default_factory=list)
    """The account's other DB instances whose series the evidence holds (a read replica, unrelated instances):
    lint's `dimension` rule accepts series of these as well as of `db_instance_identifier`. Empty: the
    evidence is the instance's own (and its read replica's, named by the alert's `read_replica`)."""
