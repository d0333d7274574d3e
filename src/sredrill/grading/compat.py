"""Compatibility grading: answer keys in the upstream format, graded as the upstream scorer defines each field.

A scenario whose `answer.yml` sets none of sredrill's keys (`failure_modes`, `ruled_out`) is graded in
compatibility mode (`Scenario.grading`, recorded at load; every domain). The upstream suites' scorers
(`reference/original_eks_suite.md` §3, `reference/original_rds_suite.md` §3) define each field; sredrill keeps
their meaning and fixes their holes:

- `category`: the key's category, or one the domain accepts beside it for the scenario's failure mode
  (`Domain.compat_categories`: a DNS failure is also a `dependency_failure`, as upstream's scorer has it).
- `failure_modes`: observed, never gating: the fine mode is derived from `scenario.yml`, the key never states it.
- `forbidden_categories`: the diagnosis's coarse category only (upstream compares categories); an entry that is
  a failure mode never fires (sredrill mode would read it as forbidding the derived mode itself).
- `required_keywords`: the upstream matcher (`keywords.UpstreamKeywordMatcher`: substring, an alias as a
  substring, or every token a whole word) in the root cause, causal chain and claims; not in the report, which
  quotes alert and evidence text (our fix).
- `forbidden_keywords`: a substring of the root cause, causal chain, claims or report; never of the ruled-out
  entries, so an agent can say what it ruled out (our fix).
- `evidence_queried` gates as in sredrill mode; `evidence_cited` is observed (upstream checks gathering only).
- `ruling_out` (Axis 2): the upstream matcher over the ruled-out entries and the report.
- `required_queries` (Axis 2): upstream's name match (`query_matches`): each name normalised, a substring of a
  returned name or the other way round (a domain's tools return their legacy names too).

Everything else (root cause present, the trajectory checks, Axis 2 roles) is as in sredrill mode.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sredrill.diagnosis import Category
from sredrill.grading.grade import CheckOutcome
from sredrill.grading.grader import Grader, listed
from sredrill.grading.keywords import UpstreamKeywordMatcher, has_substring
from sredrill.grading.sources import cited_sources
from sredrill.results import SignalRole

__all__ = ["CompatGrader", "query_matches", "query_name"]


def query_name(name: str) -> str:
    """A query or returned name as the upstream scorer compares them: lower case, spaces and `-` as `_`."""
    return name.strip().lower().replace(" ", "_").replace("-", "_")


def query_matches(required: str, returned: str) -> bool:
    """True when the normalised required name is a substring of the normalised returned one, or the other way
    round (`CPUUtilization` and `cpuutilization`; `write latency` and `Write-Latency_ms`).

    Upstream also tries the name with a platform word dropped; sredrill's tools return their legacy names in
    their audit instead (`ToolAnswer.returned_metrics`), so the core needs no platform's spelling.
    """
    want, got = query_name(required), query_name(returned)
    return bool(want) and bool(got) and (want in got or got in want)


@dataclass(frozen=True, slots=True)
class CompatGrader(Grader):
    """The checks of a scenario whose answer key is in the upstream format (the module docstring's table)."""

    def _observe(self, outcome: CheckOutcome) -> CheckOutcome:
        return dataclasses.replace(outcome, role=SignalRole.OBSERVE)

    def category(self) -> CheckOutcome:
        key = self.scenario.answer.root_cause_category
        extra = [c for m in sorted(self.expected_modes) for c in self.domain.compat_categories.get(m, ()) if c != key]
        accepted: tuple[Category, ...] = (key, *dict.fromkeys(extra))
        shown = key.value + (f" (or {', '.join(c.value for c in accepted[1:])})" if extra else "")
        if self.diagnosis is None:
            return self._gate(False, self.no_diagnosis)
        got = self.diagnosis.category
        if got is None:
            return self._gate(False, f"no category given (expected {shown})")
        if got not in accepted:
            return self._gate(False, f"expected {shown}, got {got.value}")
        return self._gate(True, got.value if got == key else f"{got.value} (accepted beside {key.value})")

    def forbidden_categories(self) -> CheckOutcome:
        forbidden = self.scenario.answer.forbidden_categories
        if self.diagnosis is None:
            return self._gate(False, self.no_diagnosis)
        category = self.diagnosis.category.value if self.diagnosis.category else None
        if category is not None and category in forbidden:
            return self._gate(False, f"forbidden category: {category!r}")
        return self._gate(
            True, f"category is none of: {listed(forbidden)}" if forbidden else "no category is forbidden"
        )

    def required_keywords(self) -> CheckOutcome:
        keywords = self.scenario.answer.required_keywords
        if self.diagnosis is None:
            return self._gate(False, self.no_diagnosis)
        d = self.diagnosis
        # Not the report: it quotes alert and evidence text, which would meet keywords the agent never used.
        matcher = UpstreamKeywordMatcher.of([d.root_cause, *d.causal_chain, *(c.text for c in d.claims)], self.aliases)
        found, missing = matcher.find(keywords)
        if missing:
            return self._gate(
                False, f"missing keywords: {listed(missing)} (looked in root_cause, causal_chain, claims)"
            )
        return self._gate(True, f"found: {listed(found)}")

    def forbidden_keywords(self) -> CheckOutcome:
        keywords = self.scenario.answer.forbidden_keywords
        if self.diagnosis is None:
            return self._gate(False, self.no_diagnosis)
        if not keywords:
            return self._gate(True, "no keyword is forbidden")
        d = self.diagnosis
        # ruled_out is left out: an agent must be able to say what it ruled out.
        fields = [
            ("root_cause", d.root_cause),
            *((f"causal_chain[{i}]", step) for i, step in enumerate(d.causal_chain)),
            *((f"claims[{i}]", c.text) for i, c in enumerate(d.claims)),
            ("report", d.report),
        ]
        hits = []
        for keyword in keywords:
            places = [where for where, text in fields if has_substring(text, keyword)]
            if places:
                hits.append(f"{keyword!r} in {', '.join(places)}")
        if hits:
            return self._gate(False, f"forbidden keywords found: {'; '.join(hits)}")
        return self._gate(True, f"none of: {listed(keywords)}")

    def evidence_cited(self) -> CheckOutcome:
        # Upstream checks that the evidence was gathered, not cited: citing is observed.
        return self._observe(Grader.evidence_cited(self))

    def cited_sources(self) -> frozenset[str]:
        # Upstream cites sources by name; an item citation names its source too.
        names = (e for c in self.diagnosis.claims for e in c.sources) if self.diagnosis else ()
        return Grader.cited_sources(self) | cited_sources(names, self.domain)

    # The key names no decisive item, location or refutation: the grounded checks are observed.
    def citations(self) -> CheckOutcome:
        return self._observe(Grader.citations(self))

    def decisive_evidence(self) -> CheckOutcome:
        return self._observe(Grader.decisive_evidence(self))

    def location(self) -> CheckOutcome:
        return self._observe(Grader.location(self))

    def failure_modes(self) -> CheckOutcome:
        # The key names no fine mode: scenario.yml's is shown, never required.
        return self._observe(Grader.failure_modes(self))

    def ruling_out(self, missing: list[str]) -> CheckOutcome:
        # Upstream looks for the keywords in the ruled-out entries and the report; no citation is asked for.
        if self.diagnosis is None or not missing:
            return Grader.ruling_out(self, missing)
        return CheckOutcome(
            passed=False,
            role=self.axis2_role,
            detail=f"not ruled out: {listed(missing)} (looked in ruled_out and report)",
        )

    def missing_ruling_out(self) -> list[str]:
        answer = self.scenario.answer
        if self.diagnosis is None:
            return list(answer.ruling_out_keywords or ())
        d = self.diagnosis
        matcher = UpstreamKeywordMatcher.of(
            [*(r.hypothesis for r in d.ruled_out), *(r.reason for r in d.ruled_out), d.report], self.aliases
        )
        return list(matcher.find(answer.ruling_out_keywords or ())[1])

    def missing_queries(self) -> list[str]:
        required = self.scenario.answer.required_queries or ()
        return [q for q in required if not any(query_matches(q, r) for r in self.returned)]
