"""The RDS domain's record models: CloudWatch GetMetricData, RDS DescribeEvents, Performance Insights, and the
instance's PostgreSQL log.

Foreign formats (STYLE #8): unknown keys are ignored, so real exports load; the keys we read are validated.
Every timestamp is a timezone-aware datetime. A series (CloudWatch's or Performance Insights' `db_load`) has
at least one point, one value per timestamp, finite values, and timestamps strictly ascending or strictly
descending (GetMetricData's default `TimestampDescending`): a NaN, a repeated or out-of-order timestamp
would otherwise be served, and graded, as if it were data.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "CLOUDWATCH_UNITS",
    "LOG_LEVELS",
    "CloudWatchMetrics",
    "DbLoad",
    "LogRecord",
    "MetricDimension",
    "MetricEnvelope",
    "MetricSeries",
    "PerformanceInsights",
    "PostgresLog",
    "RdsEvent",
    "RdsEvents",
    "TopHost",
    "TopSql",
    "TopUser",
    "WaitEvent",
]

# CloudWatch's StandardUnit values: a unit outside them is a typo ("ms", "Percentage").
CLOUDWATCH_UNITS: tuple[str, ...] = (
    "Seconds", "Microseconds", "Milliseconds",
    "Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
    "Bits", "Kilobits", "Megabits", "Gigabits", "Terabits",
    "Percent", "Count",
    "Bytes/Second", "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second",
    "Bits/Second", "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second",
    "Count/Second", "None",
)  # fmt: skip
_UNIT = Literal[CLOUDWATCH_UNITS]  # type: ignore[valid-type]  # a Literal of the tuple above, built at import
# GetMetricData statistics: the five simple ones plus extended statistics (p99, tm90, wm99.5, IQM, …).
_STAT = re.compile(r"^(Average|Maximum|Minimum|Sum|SampleCount|IQM|(p|tm|wm|tc|ts|pr)\d{1,2}(\.\d+)?)$")


class _Foreign(BaseModel):
    # allow_inf_nan=False also refuses the strings "NaN" and "inf", which a float field would otherwise parse.
    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True, allow_inf_nan=False)


def _equal_lengths(timestamps: list[datetime], values: list[float]) -> None:
    if len(timestamps) != len(values):
        raise ValueError(
            f"timestamps has {len(timestamps)} items but values has {len(values)}: give one value per timestamp"
        )


def _ordered_points(timestamps: list[datetime]) -> list[datetime]:
    """Refuse an empty series and timestamps that repeat or change direction (see the module docstring)."""
    if not timestamps:
        raise ValueError(
            "the series has no points: drop it (a metric with no data gives an agent nothing), "
            "or give it its timestamps and values"
        )
    direction = 0
    for i in range(1, len(timestamps)):
        before, now = timestamps[i - 1], timestamps[i]
        if now == before:
            raise ValueError(
                f"timestamps[{i}] {now.isoformat()} repeats timestamps[{i - 1}]: give each point its own "
                "timestamp (drop the duplicate)"
            )
        step = 1 if now > before else -1
        if direction and step != direction:
            order = "ascending" if direction > 0 else "descending"
            raise ValueError(
                f"timestamps[{i}] {now.isoformat()} breaks the {order} order of the series "
                f"(timestamps[{i - 1}] is {before.isoformat()}): sort the points by time, "
                "keeping each value with its timestamp"
            )
        direction = step
    return timestamps


class MetricDimension(_Foreign):
    """A CloudWatch dimension, as `{"Name": …, "Value": …}`."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    name: str = Field(alias="Name")
    value: str = Field(alias="Value")


class MetricSeries(_Foreign):
    """One item of `metric_data_results`: a metric, its statistic and its points."""

    id: str
    label: str = ""
    metric_name: str
    dimensions: list[MetricDimension] = Field(default_factory=list)
    stat: str
    """`Average`, `Maximum`, `Minimum`, `Sum`, `SampleCount` or an extended statistic such as `p99`."""
    unit: _UNIT
    status_code: str = "Complete"
    timestamps: list[AwareDatetime]
    values: list[float]

    @field_validator("stat")
    @classmethod
    def _known_stat(cls, stat: str) -> str:
        if not _STAT.match(stat):
            raise ValueError(
                f"{stat!r} is not a CloudWatch statistic: use Average, Maximum, Minimum, Sum, SampleCount "
                "or a percentile such as p99"
            )
        return stat

    @field_validator("timestamps")
    @classmethod
    def _ordered(cls, timestamps: list[datetime]) -> list[datetime]:
        return _ordered_points(timestamps)

    @model_validator(mode="after")
    def _lengths(self) -> MetricSeries:
        _equal_lengths(self.timestamps, self.values)
        return self

    def dimension(self, name: str) -> str | None:
        """The value of a dimension, or None when the series has no such dimension."""
        return next((d.value for d in self.dimensions if d.name == name), None)


class MetricEnvelope(_Foreign):
    """The request window of a GetMetricData call: the top-level keys of the metrics file."""

    namespace: str = "AWS/RDS"
    period: int = Field(gt=0)
    """Seconds between points."""
    start_time: AwareDatetime
    end_time: AwareDatetime
    """Exclusive, as in GetMetricData."""

    @model_validator(mode="after")
    def _ordered(self) -> MetricEnvelope:
        if self.end_time <= self.start_time:
            raise ValueError("end_time must be after start_time")
        return self

    @property
    def midpoint(self) -> datetime:
        return self.start_time + (self.end_time - self.start_time) / 2


class CloudWatchMetrics(MetricEnvelope):
    """`aws_cloudwatch_metrics.json`: the envelope plus every series."""

    metric_data_results: list[MetricSeries] = Field(min_length=1)


class RdsEvent(_Foreign):
    """One RDS event (DescribeEvents)."""

    date: AwareDatetime
    message: str
    source_identifier: str
    source_type: str = "db-instance"
    event_categories: list[str] = Field(default_factory=list)


class RdsEvents(_Foreign):
    """`aws_rds_events.json`.

    `start_time`/`end_time` are optional: the window the events were requested for (DescribeEvents'
    StartTime/EndTime). When absent, the metric window is the expected window; lint warns about events
    outside whichever applies.
    """

    events: list[RdsEvent] = Field(default_factory=list)
    start_time: AwareDatetime | None = None
    end_time: AwareDatetime | None = None


class WaitEvent(_Foreign):
    """A wait event and the DB load (average active sessions) spent in it."""

    name: str
    """`CPU`, `IO:WALWrite`, `LWLock:BufferMapping`, `Client:ClientRead`, …"""
    type: str
    """`CPU`, `IO`, `Lock`, `LWLock`, `Client`, `IPC`, `Timeout`, `Activity`, …"""
    db_load_avg: float


class TopSql(_Foreign):
    """A statement (parameterised SQL) by DB load, with its waits."""

    statement: str
    db_load_avg: float
    wait_events: list[WaitEvent] = Field(default_factory=list)
    calls_per_sec: float | None = None


class TopUser(_Foreign):
    """A database user by DB load."""

    name: str
    db_load_avg: float


class TopHost(_Foreign):
    """A client host (IP address) by DB load."""

    id: str
    db_load_avg: float


class DbLoad(_Foreign):
    """DB load over time (`db.load.avg`), one value per timestamp."""

    timestamps: list[AwareDatetime]
    values: list[float]
    unit: str = "Average Active Sessions"

    @field_validator("timestamps")
    @classmethod
    def _ordered(cls, timestamps: list[datetime]) -> list[datetime]:
        return _ordered_points(timestamps)

    @model_validator(mode="after")
    def _lengths(self) -> DbLoad:
        _equal_lengths(self.timestamps, self.values)
        return self


class PerformanceInsights(_Foreign):
    """`aws_performance_insights.json`: DB load over time and its top dimensions."""

    db_instance_identifier: str
    start_time: AwareDatetime
    end_time: AwareDatetime
    db_load: DbLoad
    top_sql: list[TopSql] = Field(default_factory=list)
    top_wait_events: list[WaitEvent] = Field(default_factory=list)
    top_users: list[TopUser] = Field(default_factory=list)
    top_hosts: list[TopHost] = Field(default_factory=list)


# PostgreSQL's message severities (`log_min_messages`), and the secondary lines that follow a message.
LOG_LEVELS: tuple[str, ...] = (
    "DEBUG1", "DEBUG2", "DEBUG3", "DEBUG4", "DEBUG5", "INFO", "NOTICE", "WARNING", "ERROR", "LOG", "FATAL", "PANIC",
    "DETAIL", "HINT", "STATEMENT", "CONTEXT", "QUERY", "LOCATION",
)  # fmt: skip


class LogRecord(_Foreign):
    """One line of the PostgreSQL log: when, how severe, which backend, and the message.

    The fields are those of RDS's default `log_line_prefix` (`%t:%r:%u@%d:[%p]:`) and the line's severity.
    """

    timestamp: AwareDatetime
    level: str
    """`LOG`, `WARNING`, `ERROR`, `FATAL`, `PANIC`, … or a secondary line (`DETAIL`, `HINT`, `STATEMENT`)."""
    message: str = Field(min_length=1)
    pid: int | None = Field(default=None, ge=0)
    """The backend's process id (`%p`)."""
    user: str = ""
    database: str = ""
    client: str = ""
    """The client's host and port (`%r`), e.g. `10.40.12.31(51234)`; empty for the server's own processes."""

    @field_validator("level", mode="before")
    @classmethod
    def _known_level(cls, level: object) -> object:
        if not isinstance(level, str):
            return level
        name = level.strip().upper()
        if name not in LOG_LEVELS:
            raise ValueError(f"{level!r} is not a PostgreSQL log level: use one of {', '.join(LOG_LEVELS)}")
        return name


class PostgresLog(_Foreign):
    """`aws_rds_postgresql_log.json`: the instance's PostgreSQL log over the scenario's window, oldest first.

    The records are what RDS's log files (`error/postgresql.log.YYYY-MM-DD-HH`, or the CloudWatch Logs group
    `/aws/rds/instance/<id>/postgresql`) hold, one record per line. `start_time`/`end_time` are optional: the
    window the log was read for; lint warns about records outside it (or outside the metric window).
    """

    db_instance_identifier: str
    log_file: str = ""
    """The RDS log file (or log stream) the records come from."""
    start_time: AwareDatetime | None = None
    end_time: AwareDatetime | None = None
    records: list[LogRecord] = Field(default_factory=list)

    @field_validator("records")
    @classmethod
    def _in_order(cls, records: list[LogRecord]) -> list[LogRecord]:
        for i in range(1, len(records)):
            before, now = records[i - 1].timestamp, records[i].timestamp
            if now < before:
                raise ValueError(
                    f"records[{i}].timestamp {now.isoformat()} is before records[{i - 1}].timestamp "
                    f"{before.isoformat()}: a log is written oldest first; sort the records by timestamp"
                )
        return records

    @model_validator(mode="after")
    def _window(self) -> PostgresLog:
        if self.start_time is not None and self.end_time is not None and self.end_time <= self.start_time:
            raise ValueError("end_time must be after start_time")
        return self
