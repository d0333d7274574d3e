"""The Diagnosis: what an RCA agent concludes, and the parser for the original suite's text format."""

from __future__ import annotations

import re
from datetime import datetime
from enum import StrEnum

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

__all__ = [
    "ITEM_ID",
    "MAX_CITATIONS_PER_CLAIM",
    "MAX_CITED_ITEMS",
    "Category",
    "Citation",
    "Claim",
    "Diagnosis",
    "FactKind",
    "RuledOut",
    "diagnosis_text",
    "parse_citation",
    "parse_diagnosis_text",
]

MAX_CITATIONS_PER_CLAIM = 3
"""A claim cites at most this many evidence items (a fourth fails the `citations` check)."""
MAX_CITED_ITEMS = 8
"""A diagnosis's claims cite at most this many distinct items in all: citing everything proves nothing."""
ITEM_ID = re.compile(r"^[a-z][a-z0-9]*-[0-9a-f]{10}$")
"""The shape of an evidence item's id (`metric-3f9a1c2e4b`): a kind, a dash, ten hex digits of its identity."""


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


class FactKind(StrEnum):
    """What a citation says about its item; the grader checks it against the points this agent was served."""

    RISING = "rising"
    FALLING = "falling"
    FLAT = "flat"
    ABOVE = "above"
    BELOW = "below"
    ABSENT = "absent"
    PRESENT = "present"


class Citation(BaseModel):
    """One evidence item a claim rests on, by the id a tool result gave it, and one typed fact about it.

    `start`/`end` narrow the fact to a window (`during`); without them it is about every point served.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    item: str = Field(min_length=1)
    """The item's id as a tool result named it (`"id": "metric-3f9a1c2e4b"`)."""
    fact: FactKind = FactKind.PRESENT
    value: float | None = None
    """The threshold of `above` / `below` (required for them, ignored otherwise)."""
    start: AwareDatetime | None = None
    end: AwareDatetime | None = None

    def describe(self) -> str:
        """The citation as the text format writes it: `metric-3f9a1c2e4b above 90 from … to …`."""
        parts = [self.item, self.fact.value]
        if self.value is not None and self.fact in (FactKind.ABOVE, FactKind.BELOW):
            parts.append(f"{self.value:g}")
        if self.start is not None:
            parts += ["from", _iso(self.start)]
        if self.end is not None:
            parts += ["to", _iso(self.end)]
        return " ".join(parts)


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    text: str
    evidence: list[Citation | str] = Field(default_factory=list)
    """What backs the claim: citations of evidence items (a bare item id cites it as `present`); in packs with
    upstream answer keys, evidence source names (`aws_cloudwatch_metrics`) also count. Empty = not validated."""
    supports: list[str] = Field(default_factory=list)
    """The diagnosed failure modes this claim supports; empty = every one the diagnosis names."""

    @property
    def citations(self) -> list[Citation]:
        """The item citations of `evidence` (a bare id as `present`); source names are left out."""
        return [c for c in map(_as_citation, self.evidence) if c is not None]

    @property
    def sources(self) -> list[str]:
        """The entries of `evidence` that are not item citations (evidence source names, as upstream cites)."""
        return [e for e in self.evidence if isinstance(e, str) and not ITEM_ID.match(e.strip())]


class RuledOut(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    hypothesis: str
    reason: str = ""
    evidence: list[Citation | str] = Field(default_factory=list)
    """Items whose facts refute the hypothesis (as `Claim.evidence`)."""

    @property
    def citations(self) -> list[Citation]:
        return [c for c in map(_as_citation, self.evidence) if c is not None]


def _as_citation(entry: Citation | str) -> Citation | None:
    if isinstance(entry, Citation):
        return entry
    text = entry.strip()
    return Citation(item=text) if ITEM_ID.match(text) else None


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
    """Hypotheses the agent considered and dismissed, each with its reason and the items that refute it."""
    location: list[str] = Field(default_factory=list)
    """Where the fault is: the resources at fault (an instance, a replica, a pod, a node), as the evidence names
    them. Every entry must be one of the fault's locations."""
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
_FACTS_WITH_VALUE = (FactKind.ABOVE, FactKind.BELOW)


def parse_citation(text: str) -> Citation:
    """One citation of the text format: `ITEM-ID [FACT [VALUE]] [from TIME] [to TIME]`.

    Raises:
        ValueError: the text is not a citation; the message says what is wrong and what is allowed.
    """
    tokens = text.split()
    if not tokens or not ITEM_ID.match(tokens[0]):
        raise ValueError(f"{text.strip()!r} does not start with an item id (like metric-3f9a1c2e4b)")
    fields: dict[str, object] = {"item": tokens[0]}
    rest = tokens[1:]
    if rest and rest[0].lower() not in ("from", "to"):
        kind = rest.pop(0).lower()
        if kind not in set(FactKind):
            raise ValueError(f"unknown fact {kind!r} in {text.strip()!r}; facts: {', '.join(FactKind)}")
        fields["fact"] = kind
        if kind in _FACTS_WITH_VALUE:
            if not rest:
                raise ValueError(f"{kind!r} needs a value in {text.strip()!r} (e.g. {tokens[0]} {kind} 90)")
            raw = rest.pop(0)
            try:
                fields["value"] = float(raw)
            except ValueError:
                raise ValueError(f"{raw!r} is not a number in {text.strip()!r}") from None
    while rest:
        word = rest.pop(0).lower()
        if word not in ("from", "to") or not rest:
            raise ValueError(f"expected 'from TIME' or 'to TIME' in {text.strip()!r}, got {word!r}")
        fields["start" if word == "from" else "end"] = rest.pop(0)
    try:
        return Citation.model_validate(fields)
    except ValueError as e:
        raise ValueError(f"bad time in {text.strip()!r}: give ISO-8601 with a zone (2024-01-01T12:00:00Z)") from e


def _citations(raw: str) -> list[Citation | str]:
    """The entries of an `[evidence: …]` tag: citations, or source names (a malformed citation is kept as
    given, and the grader says what is wrong with it)."""
    out: list[Citation | str] = []
    for entry in re.split(r"[;,]", raw):
        entry = entry.strip()
        if not entry:
            continue
        if ITEM_ID.match(entry.split()[0]):
            try:
                out.append(parse_citation(entry))
                continue
            except ValueError:
                pass
        out.append(entry)
    return out


def _tagged(item: str) -> tuple[str, list[Citation | str]]:
    """A list item's text without its `[evidence: …]` tags, and the entries of every tag it holds, in order."""
    evidence = [e for m in _EVIDENCE.finditer(item) for e in _citations(m.group(1))]
    return " ".join(_EVIDENCE.sub("", item).split()), evidence


def parse_diagnosis_text(text: str) -> Diagnosis | None:
    """Parse the original suite's `ROOT_CAUSE:` / `ROOT_CAUSE_CATEGORY:` / … text into a Diagnosis.

    Returns None when the text has no `ROOT_CAUSE:` section. Failure modes come from a `FAILURE_MODES:`
    line (comma separated) or stay empty; `LOCATION:` (comma separated) names where the fault is;
    `RULED_OUT:` lists `hypothesis: reason [evidence: …]` items. A claim's `[evidence: …]` tag cites items
    (`ITEM-ID FACT [VALUE] [from TIME] [to TIME]`, separated by `;`) or, as upstream does, sources.
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
            claim_text, evidence = _tagged(item)
            claims.append(Claim(text=claim_text, evidence=evidence if validated else []))

    chain = items("CAUSAL_CHAIN")
    if len(chain) == 1 and "->" in chain[0]:
        chain = [c.strip() for c in chain[0].split("->") if c.strip()]

    def listed(key: str) -> list[str]:
        return [m.strip() for m in ",".join(sections.get(key, [])).split(",") if m.strip()]

    ruled = []
    for item in items("RULED_OUT"):
        body, evidence = _tagged(item)
        hypothesis, _, reason = body.partition(":")
        ruled.append(RuledOut(hypothesis=hypothesis.strip(), reason=reason.strip(), evidence=evidence))
    return Diagnosis(
        root_cause=" ".join(sections["ROOT_CAUSE"]).strip(),
        category=category,
        failure_modes=listed("FAILURE_MODES"),
        causal_chain=chain,
        claims=claims,
        ruled_out=ruled,
        location=listed("LOCATION"),
        report=text,
    )
