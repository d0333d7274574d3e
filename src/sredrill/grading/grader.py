"""The checks of DESIGN §5 as one object: `Grader` holds what every check reads, one method per check.

`checks.grade_diagnosis` builds one per diagnosis (a `compat.CompatGrader` for an answer key in the upstream
format) and asks it for every outcome, in the table's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sredrill.diagnosis import Diagnosis
from sredrill.errors import did_you_mean
from sredrill.evidence.items import ServedItem
from sredrill.grading.grade import CheckId, CheckOutcome
from sredrill.grading.grounding import Grounding, hypothesis_name
from sredrill.grading.keywords import KeywordAliases, KeywordMatcher, normalize_text
from sredrill.grading.trajectory_score import TrajectoryScore
from sredrill.results import SignalRole
from sredrill.scenarios import Domain, Scenario, Vocabulary, normalize_name

__all__ = ["Grader", "Predicted", "listed", "predicted_modes"]

# Root causes that say nothing: "unknown" (DESIGN §5) and the original suite's parser default, which its
# scorer also treated as "no root cause" (reference/original_rds_suite.md §2).
_PLACEHOLDER_ROOT_CAUSES = frozenset({"unknown", "unable to determine root cause"})


@dataclass(frozen=True, slots=True)
class Predicted:
    """A diagnosis's failure modes, resolved through the vocabulary."""

    modes: frozenset[str]
    """Canonical names of the known ones (sets expanded)."""
    unknown: tuple[str, ...]
    """One "unknown failure mode 'x' (did you mean …)" phrase per name the vocabulary does not know."""
    shown: tuple[str, ...]
    """For `actual.failure_modes`: canonical names, then unknown names as given."""


def predicted_modes(names: Iterable[str], vocabulary: Vocabulary) -> Predicted:
    modes: set[str] = set()
    unknown: list[str] = []
    raw_unknown: list[str] = []
    for name in names:
        n = normalize_name(name)
        if n in vocabulary.sets:
            modes.update(vocabulary.sets[n])
        elif vocabulary.is_failure_mode(n):
            modes.add(vocabulary.resolve(n))
        else:
            raw_unknown.append(name)
            unknown.append(_unknown_mode(name, vocabulary))
    return Predicted(frozenset(modes), tuple(unknown), (*sorted(modes), *raw_unknown))


def _unknown_mode(name: str, vocabulary: Vocabulary) -> str:
    n = normalize_name(name)
    if vocabulary.is_category(n):
        return f"unknown failure mode {name!r} (a category, not a failure mode; known: {', '.join(vocabulary.names)})"
    known = [i for i in vocabulary.identifiers() if vocabulary.is_failure_mode(i) or i in vocabulary.sets]
    hint = did_you_mean(n, known)
    return f"unknown failure mode {name!r} ({hint or 'known: ' + ', '.join(vocabulary.names)})"


def listed(names: Iterable[str]) -> str:
    return ", ".join(names) or "none"


def _same_place(given: str, accepted: str) -> bool:
    """A location as given names the accepted one: equal case-insensitively, whole or after its last `/`."""
    g, a = given.strip().casefold(), accepted.strip().casefold()
    return g == a or g.rsplit("/", 1)[-1] == a.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class Grader:
    """The inputs every check reads; one method per check, each returning its outcome."""

    scenario: Scenario
    domain: Domain
    diagnosis: Diagnosis | None
    no_diagnosis: str
    """The detail of every diagnosis check when there is no diagnosis: `NO_DIAGNOSIS`, or why there is none."""
    vocabulary: Vocabulary
    aliases: KeywordAliases
    """The pack's keyword aliases, indexed once for every text of this grade."""
    expected_modes: frozenset[str]
    predicted: Predicted
    queried: frozenset[str]
    """Sources read by a successful call the harness served."""
    reported: frozenset[str]
    """Sources of calls the agent reported but the harness never served (named in details, never counted)."""
    returned: frozenset[str]
    """Metric names the toolset returned to the agent, as it spelled them."""
    axis2_role: SignalRole
    served: Mapping[str, ServedItem]
    """Every evidence item this run's calls served, with the points served (what citations are checked against)."""
    grounding: Grounding

    def run(
        self, score: TrajectoryScore, missing_ruling: list[str] | None, missing_queries: list[str] | None
    ) -> dict[str, CheckOutcome]:
        checks: dict[str, CheckOutcome] = {
            CheckId.ROOT_CAUSE_PRESENT: self.root_cause_present(),
            CheckId.CATEGORY: self.category(),
            CheckId.FAILURE_MODES: self.failure_modes(),
            CheckId.CITATIONS: self.citations(),
            CheckId.DECISIVE_EVIDENCE: self.decisive_evidence(),
            CheckId.LOCATION: self.location(),
            CheckId.FORBIDDEN_CATEGORIES: self.forbidden_categories(),
            CheckId.REQUIRED_KEYWORDS: self.required_keywords(),
            CheckId.FORBIDDEN_KEYWORDS: self.forbidden_keywords(),
            CheckId.EVIDENCE_QUERIED: self.evidence_queried(),
            CheckId.EVIDENCE_CITED: self.evidence_cited(),
        }
        if missing_ruling is not None:
            checks[CheckId.RULING_OUT] = self.ruling_out(missing_ruling)
        if missing_queries is not None:
            checks[CheckId.REQUIRED_QUERIES] = self.required_queries(missing_queries)
        if score.sequencing_ok is not None:
            reported = (
                f"; reported by the agent but not served: {listed(dict.fromkeys(score.unverified_calls))}"
                if score.unverified_calls
                else ""
            )
            checks[CheckId.TRAJECTORY_SEQUENCING] = CheckOutcome(
                passed=score.sequencing_ok,
                role=SignalRole.OBSERVE,
                detail=(
                    f"never executed: {listed(score.missing_actions)} "
                    f"(tools called: {listed(dict.fromkeys(score.tool_calls))}{reported})"
                    if score.missing_actions
                    else f"executed every expected action: {listed(score.expected_actions)}"
                ),
            )
        checks[CheckId.TRAJECTORY_CALIBRATION] = CheckOutcome(
            passed=score.calibration_ok,
            role=SignalRole.OBSERVE,
            detail=f"{score.loops} investigation loop(s), at most {score.max_loops} expected"
            + (f"; waited {score.waited_minutes:g} minute(s) for data" if score.waited_minutes else ""),
        )
        g = self.grounding
        checks[CheckId.UNCITED_CLAIMS] = CheckOutcome(
            passed=g.uncited == 0,
            role=SignalRole.OBSERVE,
            detail=f"{g.uncited} of {g.claims} claim(s) cite no evidence item" if g.uncited else "every claim cites",
        )
        return {str(check_id): outcome for check_id, outcome in checks.items()}

    def _gate(self, passed: bool, detail: str) -> CheckOutcome:
        return CheckOutcome(passed=passed, role=SignalRole.GATE, detail=detail)

    def root_cause_present(self) -> CheckOutcome:
        if self.diagnosis is None:
            return self._gate(False, self.no_diagnosis)
        text = normalize_text(self.diagnosis.root_cause).rstrip(".!")
        if not text:
            return self._gate(False, "the root cause is empty")
        if text in _PLACEHOLDER_ROOT_CAUSES:
            return self._gate(False, f"the root cause says nothing: {self.diagnosis.root_cause.strip()!r}")
        return self._gate(True, "a root cause is given")

    def category(self) -> CheckOutcome:
        expected = self.scenario.answer.root_cause_category
        if self.diagnosis is None:
            return self._gate(False, self.no_diagnosis)
        got = self.diagnosis.category
        if got is None:
            return self._gate(False, f"no category given (expected {expected.value})")
        if got != expected:
            return self._gate(False, f"expected {expected.value}, got {got.value}")
        return self._gate(True, expected.value)

    def failure_modes(self) -> CheckOutcome:
        expected = sorted(self.expected_modes)
        if self.diagnosis is None:
            return self._gate(False, self.no_diagnosis)
        if self.predicted.unknown:
            return self._gate(False, "; ".join(self.predicted.unknown) + f" (expected {listed(expected)})")
        if not self.predicted.modes:
            return self._gate(False, f"no failure modes given (expected {listed(expected)})")
        both = sorted(self.predicted.modes & self.dismissed_modes())
        if both:
            return self._gate(False, f"diagnosed and ruled out at once: {listed(both)}")
        if self.predicted.modes != self.expected_modes:
            missing = sorted(self.expected_modes - self.predicted.modes)
            extra = sorted(self.predicted.modes - self.expected_modes)
            parts = [f"missing: {listed(missing)}"] if missing else []
            parts += [f"unexpected: {listed(extra)}"] if extra else []
            return self._gate(
                False,
                f"expected {listed(expected)}, got {listed(sorted(self.predicted.modes))} ({'; '.join(parts)})",
            )
        return self._gate(True, listed(expected))

    def dismissed_modes(self) -> frozenset[str]:
        """The failure modes the diagnosis's ruled-out entries name (canonical)."""
        v = self.vocabulary
        names = (normalize_name(r.hypothesis) for r in self.diagnosis.ruled_out) if self.diagnosis else ()
        return frozenset(v.resolve(n) for n in names if v.is_failure_mode(n))

    def citations(self) -> CheckOutcome:
        """Every citation is of an item served in this run, states a fact that holds, within the limits."""
        if self.diagnosis is None:
            return self._gate(False, self.no_diagnosis)
        g = self.grounding
        if g.problems:
            more = f" (and {len(g.problems) - 3} more)" if len(g.problems) > 3 else ""
            return self._gate(False, "; ".join(g.problems[:3]) + more)
        if not g.cited_items:
            return self._gate(True, "no item is cited")
        return self._gate(True, f"{len(g.cited_items)} item(s) cited, every fact holds")

    def decisive_evidence(self) -> CheckOutcome:
        """Each expected mode the diagnosis names is backed by a claim citing a decisive item with a true fact."""
        if self.diagnosis is None:
            return self._gate(False, self.no_diagnosis)
        decisive = self.scenario.answer.decisive
        named = sorted(self.expected_modes & self.predicted.modes)
        if not named:
            return self._gate(
                False, f"no expected failure mode is diagnosed (expected {listed(sorted(self.expected_modes))})"
            )
        missing = [m for m in named if m not in self.grounding.supported]
        if missing:
            wanted = [
                f"{m}: cite one of {listed(s.describe() for s in decisive[m])}"
                if m in decisive
                else f"{m}: cite an item served in this run with a fact that holds"
                for m in missing
            ]
            return self._gate(False, "no claim backs " + "; ".join(wanted))
        return self._gate(True, f"backed by decisive evidence: {listed(named)}")

    def location(self) -> CheckOutcome:
        """The diagnosis names where the fault is: every `location` entry is one the key accepts."""
        accepted = self.scenario.answer.location
        if self.diagnosis is None:
            return self._gate(False, self.no_diagnosis)
        given = self.diagnosis.location
        if not accepted:
            # Nothing is at fault in a healthy scenario: a diagnosis that locates a fault there is wrong.
            if given and self.expected_modes == {"healthy"}:
                return self._gate(False, f"nothing is at fault here, but location names {listed(given)}")
            return self._gate(True, "the answer key names no location")
        if not given:
            return self._gate(False, "no location given (name the resource at fault in `location`)")
        wrong = [g for g in given if not any(_same_place(g, a) for a in accepted)]
        if wrong:
            return self._gate(False, f"not where the fault is: {listed(wrong)}")
        return self._gate(True, listed(given))

    def forbidden_categories(self) -> CheckOutcome:
        forbidden = self.scenario.answer.forbidden_categories
        if self.diagnosis is None:
            return self._gate(False, self.no_diagnosis)
        # An entry is a category or a failure mode (the loader made both canonical); "healthy" and "unknown"
        # are both, so each entry is matched against the category and against every failure mode.
        hits = []
        category = self.diagnosis.category.value if self.diagnosis.category else None
        for entry in forbidden:
            if entry == category:
                hits.append(f"category {entry!r}")
            if entry in self.predicted.modes:
                hits.append(f"failure mode {entry!r}")
        if hits:
            return self._gate(False, f"forbidden prediction: {', '.join(hits)}")
        return self._gate(True, f"none of: {listed(forbidden)}" if forbidden else "nothing is forbidden")

    def _observe(self, outcome: CheckOutcome) -> CheckOutcome:
        return CheckOutcome(passed=outcome.passed, role=SignalRole.OBSERVE, detail=outcome.detail)

    def _soft(self, passed: bool, detail: str) -> CheckOutcome:
        return CheckOutcome(passed=passed, role=SignalRole.OBSERVE, detail=detail)

    # Keywords are observed in sredrill mode: words can be stuffed, citations cannot (`compat` gates them).
    def required_keywords(self) -> CheckOutcome:
        keywords = self.scenario.answer.required_keywords
        if self.diagnosis is None:
            return self._soft(False, self.no_diagnosis)
        d = self.diagnosis
        fields = [d.root_cause, *d.causal_chain, *(c.text for c in d.claims), d.report]
        found, missing = KeywordMatcher.of(fields, self.aliases).find(keywords)
        if missing:
            return self._soft(
                False, f"missing keywords: {listed(missing)} (looked in root_cause, causal_chain, claims, report)"
            )
        return self._soft(True, f"found: {listed(found)}")

    def forbidden_keywords(self) -> CheckOutcome:
        keywords = self.scenario.answer.forbidden_keywords
        if self.diagnosis is None:
            return self._soft(False, self.no_diagnosis)
        if not keywords:
            return self._soft(True, "no keyword is forbidden")
        d = self.diagnosis
        # ruled_out and report are left out on purpose: naming a hypothesis to dismiss it is not asserting it.
        fields = [
            ("root_cause", d.root_cause),
            *((f"causal_chain[{i}]", step) for i, step in enumerate(d.causal_chain)),
            *((f"claims[{i}]", c.text) for i, c in enumerate(d.claims)),
        ]
        matchers = [(where, KeywordMatcher.of(text, self.aliases)) for where, text in fields]
        hits = []
        for keyword in keywords:
            places = [where for where, m in matchers if m.has(keyword)]
            if places:
                hits.append(f"{keyword!r} in {', '.join(places)}")
        if hits:
            return self._soft(False, f"forbidden keywords found: {'; '.join(hits)}")
        return self._soft(True, f"none of: {listed(keywords)}")

    def evidence_queried(self) -> CheckOutcome:
        required = [s.value for s in self.scenario.answer.required_evidence_sources]
        if not required:
            return self._gate(True, "no evidence source is required")
        missing = [s for s in required if s not in self.queried]
        if missing:
            tools = [t for t, s in self.domain.tool_sources.items() if s in missing]
            reported = [s for s in missing if s in self.reported]
            unserved = (
                f"; the agent reported calls for {listed(reported)} that the harness never served" if reported else ""
            )
            return self._gate(
                False,
                f"never queried: {listed(missing)} (no successful call to {' or '.join(tools)}{unserved})",
            )
        return self._gate(True, f"queried: {listed(required)}")

    def evidence_cited(self) -> CheckOutcome:
        required = [s.value for s in self.scenario.answer.required_evidence_sources]
        if not required:
            return self._gate(True, "no evidence source is required")
        if self.diagnosis is None:
            return self._gate(False, self.no_diagnosis)
        cited = self.cited_sources()
        missing = [s for s in required if s not in cited]
        if missing:
            return self._gate(
                False,
                f"no claim cites an item of {listed(missing)} (claims cite items of: {listed(sorted(cited))}; "
                "cite the ids tool results give, e.g. metric-3f9a1c2e4b, with a fact that holds)",
            )
        return self._gate(True, f"cited: {listed(required)}")

    def cited_sources(self) -> frozenset[str]:
        """The sources of the items claims cite with a fact that holds (source names alone do not count)."""
        valid = self.grounding.valid
        claimed = {c.item for claim in self.diagnosis.claims for c in claim.citations} if self.diagnosis else set()
        return frozenset(self.served[i].source for i in claimed if i in valid)

    def ruling_out(self, missing: list[str]) -> CheckOutcome:
        if self.diagnosis is None:
            return CheckOutcome(passed=False, role=self.axis2_role, detail=self.no_diagnosis)
        answer = self.scenario.answer
        if missing:
            hypotheses = [m for m in missing if m in answer.ruled_out]
            words = [m for m in missing if m not in answer.ruled_out]
            parts = []
            if hypotheses:
                parts.append(
                    f"not ruled out: {listed(hypotheses)} (each needs a ruled_out entry naming it and citing an item "
                    "whose fact refutes it)" + "".join(f"; {n}" for n in self._unrefuted(hypotheses))
                )
            if words:
                parts.append(f"ruling-out keywords not found: {listed(words)} (looked in ruled_out)")
            return CheckOutcome(passed=False, role=self.axis2_role, detail="; ".join(parts))
        return CheckOutcome(
            passed=True,
            role=self.axis2_role,
            detail=f"ruled out: {listed([*answer.ruled_out, *(answer.ruling_out_keywords or ())])}",
        )

    def _unrefuted(self, hypotheses: list[str]) -> list[str]:
        """For each hypothesis a ruled-out entry names without refuting it: which entry, and what would."""
        refuting = self.scenario.answer.refuting
        entries = self.diagnosis.ruled_out if self.diagnosis else []
        notes = []
        for h in hypotheses:
            named = [j for j, r in enumerate(entries) if hypothesis_name(r.hypothesis, self.vocabulary) == h]
            if not named:
                continue
            wanted = (
                f"cite one of {listed(s.describe() for s in refuting[h])}"
                if h in refuting
                else "cite an item served in this run with a fact that holds"
            )
            where = ", ".join(f"ruled_out[{j}]" for j in named)
            notes.append(f"{where} names {h} but cites no item that refutes it: {wanted}")
        return notes

    def missing_ruling_out(self) -> list[str]:
        """Ruling-out keywords and `ruled_out` hypotheses the diagnosis does not dismiss, hypotheses first."""
        answer = self.scenario.answer
        if self.diagnosis is None:
            return [*answer.ruled_out, *(answer.ruling_out_keywords or ())]
        d = self.diagnosis
        # A hypothesis counts as dismissed only by a ruled_out entry naming it and citing an item whose fact
        # refutes it; the keywords are looked for in the ruled_out entries (not the report, which can hold anything).
        matcher = KeywordMatcher.of(
            [*(r.hypothesis for r in d.ruled_out), *(r.reason for r in d.ruled_out)], self.aliases
        )
        missing = [h for h in answer.ruled_out if h not in self.grounding.refuted]
        _, missing_keywords = matcher.find(answer.ruling_out_keywords or ())
        return [*missing, *missing_keywords]

    def required_queries(self, missing: list[str]) -> CheckOutcome:
        if missing:
            return CheckOutcome(
                passed=False,
                role=self.axis2_role,
                detail=f"never returned by a query: {listed(missing)} "
                f"(returned: {listed(sorted(self.returned)) if self.returned else 'nothing'})",
            )
        required = self.scenario.answer.required_queries or ()
        return CheckOutcome(passed=True, role=self.axis2_role, detail=f"returned: {listed(required)}")

    def missing_queries(self) -> list[str]:
        """Required metrics no query returned (metric names compared case-insensitively)."""
        returned = {m.strip().casefold() for m in self.returned}
        return [q for q in self.scenario.answer.required_queries or () if q.strip().casefold() not in returned]
