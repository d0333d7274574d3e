"""The grade of one diagnosis: every check's outcome, whether it passed, and why not."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from pydantic import JsonValue

from sredrill.grading.grounding import Grounding
from sredrill.results import Actual, Check, Expected, GradingMode, Signal, SignalRole, TrajectorySummary

__all__ = ["CheckId", "CheckOutcome", "Grade", "Score", "ScoreComponent"]


class CheckId(StrEnum):
    """The RCA checks, in DESIGN §5's table order (which is also the order `failure_reason` follows)."""

    ROOT_CAUSE_PRESENT = "root_cause_present"
    CATEGORY = "category"
    FAILURE_MODES = "failure_modes"
    CITATIONS = "citations"
    DECISIVE_EVIDENCE = "decisive_evidence"
    LOCATION = "location"
    FORBIDDEN_CATEGORIES = "forbidden_categories"
    REQUIRED_KEYWORDS = "required_keywords"
    FORBIDDEN_KEYWORDS = "forbidden_keywords"
    EVIDENCE_QUERIED = "evidence_queried"
    EVIDENCE_CITED = "evidence_cited"
    RULING_OUT = "ruling_out"
    REQUIRED_QUERIES = "required_queries"
    DATA_BUDGET = "data_budget"
    TRAJECTORY_SEQUENCING = "trajectory_sequencing"
    TRAJECTORY_CALIBRATION = "trajectory_calibration"
    UNCITED_CLAIMS = "uncited_claims"


@dataclass(frozen=True, slots=True)
class CheckOutcome:
    """The outcome of one check."""

    passed: bool
    role: SignalRole
    detail: str
    """Why it failed (`missing keywords: WAL, replica`), or what it saw when it passed."""

    @property
    def is_gate(self) -> bool:
        return self.role is SignalRole.GATE

    def to_check(self) -> Check:
        """The RunReport's form of this outcome."""
        return Check(passed=self.passed, role=self.role, detail=self.detail)


class ScoreComponent(StrEnum):
    """The parts of a grade's score (`grading.score` defines each and its weight)."""

    MODES = "modes"
    LOCATION = "location"
    EVIDENCE = "evidence"
    RULING_OUT = "ruling_out"
    EFFICIENCY = "efficiency"


@dataclass(frozen=True, slots=True)
class Score:
    """A diagnosis's score in [0, 1] beside the pass gate, and the components it is the weighted mean of."""

    value: float
    components: Mapping[str, float]
    """`ScoreComponent` value -> its value in [0, 1], in `ScoreComponent`'s order."""


@dataclass(frozen=True, slots=True)
class Grade:
    """Everything grading says about one diagnosis: the RunReport fields of one RCA result."""

    checks: Mapping[str, CheckOutcome]
    """Check id -> outcome, in DESIGN §5's order; `ruling_out`, `required_queries` and
    `trajectory_sequencing` are absent when the answer key does not define them."""
    signals: tuple[Signal, ...]
    """One `check` signal per check, same order; `message` is the detail of a failed check."""
    expected: Expected
    actual: Actual
    trajectory: TrajectorySummary
    reasoning: Mapping[str, JsonValue] | None
    """The seed's ReasoningScore (`ruling_out_ok`, `queries_ok`, `reasoning_score`, and what was missing),
    when the answer key defines ruling-out or required queries; None otherwise."""
    redundant_calls: int
    """Identical tool calls beyond the first (the TrajectorySummary has no field for it yet)."""
    grading: GradingMode = GradingMode.SREDRILL
    """How it was graded: `compat` when the scenario's answer key is in the upstream format (`grading.compat`);
    the result records it (`TestResult.grading`)."""
    grounding: Grounding | None = None
    """What the diagnosis's citations establish (`grounding.ground`): its claim counts give the result's
    `claims` and `uncited_claims`; None when grading did not record it."""
    score: Score | None = None
    """The score beside the gate (`grading.score.score_diagnosis`); None when grading did not compute it."""

    @property
    def passed(self) -> bool:
        """True when every gate check passed."""
        return all(c.passed for c in self.checks.values() if c.is_gate)

    @property
    def failure_reason(self) -> str | None:
        """`<check id>: <detail>` of the first failed gate in table order, or None when all gates passed."""
        for check_id, outcome in self.checks.items():
            if outcome.is_gate and not outcome.passed:
                return f"{check_id}: {outcome.detail}"
        return None

    @property
    def gate_fraction(self) -> float:
        """The fraction of gate checks that passed (the environment's reward at submission, DESIGN §6)."""
        gates = [c for c in self.checks.values() if c.is_gate]
        return sum(c.passed for c in gates) / len(gates)

    def report_checks(self) -> dict[str, Check]:
        """`checks` as the RunReport's models."""
        return {check_id: outcome.to_check() for check_id, outcome in self.checks.items()}
