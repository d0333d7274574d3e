"""RCA grading: the keyword matcher, the checks of DESIGN §5, the trajectory and reasoning scores.

Evidence is what the harness served, not what the agent says: every check that reads tool calls counts only
the calls the harness executed (`ToolCallStep.verified`); calls an agent merely reported are named in the
details and satisfy nothing.

The gap (Axis 1 − Axis 2 pass rate) and pass@k are computed over results by `sredrill.results.summarize`.
Constants live in their modules: `checks.NO_DIAGNOSIS` (the detail of every diagnosis check when the agent
returned nothing usable) and the scenario's domain's `tool_sources` / `citation_names` (tool and citation -> source).

A scenario whose answer key is in the upstream format (`Scenario.grading` is `compat`) is graded in
compatibility mode (`grading/compat.py`: the upstream scorer's definitions with sredrill's fixes); its `Grade`
and result say so (`grading`).

Examples:
    >>> from sredrill.grading import grade_diagnosis
    >>> grade = grade_diagnosis(scenario, diagnosis, trajectory, axis=1, returned_metrics=set(),
    ...                         vocabulary=pack.vocabulary)  # doctest: +SKIP
    >>> grade.passed, grade.failure_reason  # doctest: +SKIP
    (False, 'required_keywords: missing keywords: WAL, replica (looked in root_cause, causal_chain, claims, report)')
"""

from __future__ import annotations

from sredrill.grading.checks import AnswerKeyConflict, grade_diagnosis
from sredrill.grading.facts import check_fact, trend_of
from sredrill.grading.grade import CheckId, CheckOutcome, Grade
from sredrill.grading.keywords import (
    KeywordAliases,
    KeywordMatcher,
    UpstreamKeywordMatcher,
    find_keywords,
    normalize_text,
    split_passages,
    word_tokens,
)
from sredrill.grading.sources import cited_source, cited_sources, queried_sources, reported_sources
from sredrill.grading.trajectory_score import TrajectoryScore, count_loops, count_redundant_calls, score_trajectory

__all__ = [
    "AnswerKeyConflict",
    "CheckId",
    "CheckOutcome",
    "Grade",
    "KeywordAliases",
    "KeywordMatcher",
    "TrajectoryScore",
    "UpstreamKeywordMatcher",
    "check_fact",
    "cited_source",
    "cited_sources",
    "count_loops",
    "count_redundant_calls",
    "find_keywords",
    "grade_diagnosis",
    "normalize_text",
    "queried_sources",
    "reported_sources",
    "score_trajectory",
    "split_passages",
    "trend_of",
    "word_tokens",
]
