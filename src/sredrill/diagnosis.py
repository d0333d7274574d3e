"""The Diagnosis: what an RCA agent concludes, and the parser for the original suite's text format."""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Category", "Claim", "Diagnosis", "RuledOut", "diagnosis_text", "parse_diagnosis_text"]


class Category(StrEnum):
    """The coarse root-cause label of the original suite (8 values)."""

    CONFIGURATION_ERROR = "configuration_error"
    CODE_DEFECT = "code_defect"
    DATA_QUALITY = "data_quality"
    RESOURCE_EXHAUSTION = "resource_exhaustion"
    DEPENDENCY_FAILURE = "dependency_failure"
    INFRASTRUCTURE = "infrastructure"
    HEALTHY = "healthy"
    UNKNOWN = "unknown"


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    text: str
    evidence: list[str] = Field(default_factory=list)
    """Evidence sources backing the claim (`aws_cloudwatch_metrics`, `aws_rds_events`, …); empty = not validated."""


class RuledOut(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    hypothesis: str
    reason: str = ""


class Diagnosis(BaseModel):
    """An agent's conclusion about an incident."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    root_cause: str
    """The root cause in one or two sentences."""
    category: Category | None = None
    """The coarse category; None when the agent did not say."""
    failure_modes: list[str] = Field(default_factory=list)
    """Fine-grained root causes: order-free, several for a compositional fault, `["unknown"]` when nothing fits."""
    causal_chain: list[str] = Field(default_factory=list)
    """Cause → effect steps, in order."""
    claims: list[Claim] = Field(default_factory=list)
    ruled_out: list[RuledOut] = Field(default_factory=list)
    """Hypotheses the agent considered and dismissed, each with its reason."""
    report: str = ""
    """Free text for humans."""


def diagnosis_text(d: Diagnosis) -> str:
    """The Diagnosis as readable text: root cause, causal chain and report."""
    parts = [d.root_cause]
    if d.causal_chain:
        parts.append("Causal chain: " + " -> ".join(d.causal_chain))
    if d.report:
        parts.append(d.report)
    return "\n".join(p for p in parts if p)


_SECTION = re.compile(r"^\s*([A-Z_]{4,}):\s*(.*)$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*(.+)$")
_EVIDENCE = re.compile(r"\[evidence:\s*([^\]]*)\]", re.IGNORECASE)


def parse_diagnosis_text(text: str) -> Diagnosis | None:
    """Parse the original suite's `ROOT_CAUSE:` / `ROOT_CAUSE_CATEGORY:` / … text into a Diagnosis.

    Returns None when the text has no `ROOT_CAUSE:` section. Failure modes come from a `FAILURE_MODES:`
    line (comma separated) or stay empty.
    """
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            current = m.group(1)
            sections.setdefault(current, [])
            if m.group(2).strip():
                sections[current].append(m.group(2).strip())
        elif current and line.strip():
            sections[current].append(line.strip())
    if "ROOT_CAUSE" not in sections:
        return None

    def items(key: str) -> list[str]:
        out = []
        for raw in sections.get(key, []):
            m = _LIST_ITEM.match(raw)
            out.append((m.group(1) if m else raw).strip())
        return [i for i in out if i and i.lower() not in {"none", "n/a", "-"}]

    category = None
    raw_cat = " ".join(sections.get("ROOT_CAUSE_CATEGORY", [])).strip().lower()
    if raw_cat in set(Category):
        category = Category(raw_cat)

    claims = []
    for key, validated in (("VALIDATED_CLAIMS", True), ("NON_VALIDATED_CLAIMS", False)):
        for item in items(key):
            sources = []
            m = _EVIDENCE.search(item)
            if m and validated:
                sources = [s.strip() for s in m.group(1).split(",") if s.strip()]
            claims.append(Claim(text=_EVIDENCE.sub("", item).strip(), evidence=sources))

    chain = items("CAUSAL_CHAIN")
    if len(chain) == 1 and "->" in chain[0]:
        chain = [c.strip() for c in chain[0].split("->") if c.strip()]
    modes = [m.strip() for m in ",".join(sections.get("FAILURE_MODES", [])).split(",") if m.strip()]
    ruled = [RuledOut(hypothesis=i) for i in items("RULED_OUT")]
    return Diagnosis(
        root_cause=" ".join(sections["ROOT_CAUSE"]).strip(),
        category=category,
        failure_modes=modes,
        causal_chain=chain,
        claims=claims,
        ruled_out=ruled,
        report=text,
    )
