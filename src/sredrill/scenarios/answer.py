"""`answer.yml`: the ground truth of a scenario, never shown to an agent.

The names it uses that belong to a domain (evidence sources, trajectory actions) are plain strings here; the
loader checks them against the scenario's domain (`scenarios.domain`), with a "did you mean".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    PositiveInt,
    model_validator,
)
from pydantic_core import core_schema

from sredrill.diagnosis import Category, Citation, FactKind

__all__ = ["SREDRILL_KEYS", "TEXT_FIELDS", "AnswerKey", "ItemSelector", "SourceName"]

SREDRILL_KEYS = ("failure_modes", "ruled_out", "location", "decisive", "refuting")
"""The keys sredrill adds to the upstream `answer.yml`: a key that sets none of them is in the upstream format,
and its scenario is graded in compatibility mode (`Scenario.grading`)."""


class SourceName(str):
    """An evidence source's id (a `str`); `.value` reads it as the enum of the sources once did."""

    __slots__ = ()

    @property
    def value(self) -> str:
        return str(self)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(
            cls, core_schema.str_schema(), serialization=core_schema.plain_serializer_function_ser_schema(str)
        )


_Source = Annotated[SourceName, Field(description="an evidence source of the scenario's domain")]


TEXT_FIELDS = frozenset({"text", "message", "statement"})
"""Identity fields a selector matches as a case-insensitive substring (an event's text); the others must equal."""


class ItemSelector(BaseModel):
    """Names evidence items by their identity, as the answer key's `decisive` and `refuting` entries do.

    Every field other than `shows` is an identity field of the item (`kind`, `source`, `metric`, `stat`,
    `resource`, `text`, `pod`, …): an item matches when it has each one, equal case-insensitively (`text`,
    `message` and `statement` as a substring; a value ending in `*` as a prefix, so `checkout-*` names every
    pod of a deployment). `shows`: the facts a citation of it must state to count (any fact that holds when
    empty). `above` / `below`: the least informative bound a citation of that fact may state — without them,
    "restarts above -1" would hold for any pod. `during`: the minutes a level must be stated over — "CPU stayed
    below 90" refutes a saturation only through the report's peak, not over a quiet hour.
    """

    model_config = ConfigDict(extra="allow", frozen=True, use_attribute_docstrings=True)

    shows: list[FactKind] = Field(default_factory=list)
    above: float | None = None
    """A citation `above V` counts only when V >= this (it says at least this much)."""
    below: float | None = None
    """A citation `below V` counts only when V <= this."""
    during: tuple[AwareDatetime, AwareDatetime] | None = None
    """`[start, end]`: a citation `above`/`below` counts only when its window holds all of this one (a citation
    without `from`/`to` is about every point served) and the points served reach into it."""

    @model_validator(mode="after")
    def _identity_fields(self) -> ItemSelector:
        if self.during is not None and self.during[0] > self.during[1]:
            raise ValueError("during: give [start, end] with start at or before end")
        extra = self.model_extra or {}
        if not extra:
            raise ValueError("a selector names at least one identity field (metric, text, pod, …) besides shows")
        for name, value in extra.items():
            if not isinstance(value, str | int | float) or isinstance(value, bool):
                raise ValueError(f"{name}: give a string, got {type(value).__name__}")
        return self

    @property
    def fields(self) -> dict[str, str]:
        """The identity fields it names, values as strings."""
        return {k: str(v) for k, v in (self.model_extra or {}).items()}

    def matches(self, kind: str, source: str, identity: Mapping[str, str]) -> bool:
        """True when an item of this kind, source and identity is one this selector names."""
        full = {**identity, "kind": kind, "source": source}
        for name, want in self.fields.items():
            have = full.get(name)
            if have is None:
                return False
            w, h = want.casefold(), have.casefold()
            if w.endswith("*"):
                if not h.startswith(w[:-1]):
                    return False
            elif not (w in h if name in TEXT_FIELDS else w == h):
                return False
        return True

    def accepts(self, citation: Citation) -> bool:
        """True when a citation (of an item this selector matches, its fact holding) states a fact that counts."""
        if self.shows and citation.fact not in self.shows:
            return False
        value = citation.value
        if self.during is not None and citation.fact in (FactKind.ABOVE, FactKind.BELOW):
            start, end = self.during
            if (citation.start is not None and citation.start > start) or (
                citation.end is not None and citation.end < end
            ):
                return False
        if citation.fact == FactKind.ABOVE and self.above is not None:
            return value is not None and value >= self.above
        if citation.fact == FactKind.BELOW and self.below is not None:
            return value is not None and value <= self.below
        return True

    def describe(self) -> str:
        named = ", ".join(f"{k}={v}" for k, v in self.fields.items())
        facts = [
            f"above {self.above:g}"
            if f == FactKind.ABOVE and self.above is not None
            else f"below {self.below:g}"
            if f == FactKind.BELOW and self.below is not None
            else f.value
            for f in self.shows
        ]
        during = f" from {_iso(self.during[0])} to {_iso(self.during[1])}" if self.during else ""
        return named + (f" ({'/'.join(facts)}{during})" if facts else during)


def _iso(t: Any) -> str:
    return str(t.isoformat().replace("+00:00", "Z"))


# Category values that are not also failure-mode names ("healthy" and "unknown" are both).
_PURE_CATEGORIES = frozenset(c.value for c in Category) - {"healthy", "unknown"}


class AnswerKey(BaseModel):
    """The keys of `answer.yml`: the original suite's, plus sredrill's `failure_modes` and `ruled_out`.

    `extra="forbid"`: the model declares every key of the original suite's answer.yml, so its files load
    and a typo in ours is an error. Once loaded through `load_pack`, names are canonical: `failure_modes`
    is filled (default: scenario.yml's `failure_mode`), and aliases in `failure_modes`,
    `forbidden_categories` and `ruled_out` are resolved.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    root_cause_category: Category
    required_keywords: list[str] = Field(min_length=1)
    """Natural-language words a correct diagnosis uses; matched by token set after lower-casing."""
    model_response: str
    """A reference answer in the original text format; never shown to agents, never scored."""
    forbidden_categories: list[str] = Field(default_factory=list)
    """Categories or failure modes no prediction may contain."""
    forbidden_keywords: list[str] = Field(default_factory=list)
    required_evidence_sources: list[_Source] = Field(default_factory=list)
    """Evidence sources a correct diagnosis queried and cites (the domain's source names)."""
    optimal_trajectory: list[str] = Field(default_factory=list)
    """Tools (or the upstream suite's action names) a good investigation uses; checked as a set."""
    max_investigation_loops: PositiveInt = 1
    ruling_out_keywords: list[str] | None = Field(default=None, min_length=1)
    """Axis 2: words the agent's ruled-out reasoning must contain."""
    required_queries: list[str] | None = Field(default=None, min_length=1)
    """Axis 2: metric names the agent must query (`FreeStorageSpace`, `CPUUtilization`)."""
    data_budget: PositiveInt | None = None
    """sredrill, Axis 2: the most distinct series points the agent may be served (`evidence.budget`); default:
    derived from the scenario (a share of its points, capped at a number of whole series)."""
    failure_modes: list[str] | None = None
    """sredrill: the true fine-grained root causes (several for a compositional fault)."""
    ruled_out: list[str] = Field(default_factory=list)
    """sredrill: hypotheses (failure modes or categories) a correct diagnosis must dismiss."""
    location: list[str] = Field(default_factory=list)
    """sredrill: where the fault is, each name a diagnosis may give for it (an instance, a replica, a pod, its
    deployment); a diagnosis's every `location` entry must be one of them. Empty: nothing to locate (healthy)."""
    decisive: dict[str, list[ItemSelector]] = Field(default_factory=dict)
    """sredrill: per failure mode, the items that show it; a diagnosed mode counts only when a claim supporting
    it cites one of them with a fact that holds (one of its `shows`)."""
    refuting: dict[str, list[ItemSelector]] = Field(default_factory=dict)
    """sredrill: per `ruled_out` hypothesis, the items whose facts refute it; without an entry, any cited item
    with a fact that holds refutes it."""

    @property
    def sets_sredrill_keys(self) -> bool:
        """True when the file sets one of `SREDRILL_KEYS` (even to an empty list).

        Read it on the key as parsed: the loader's canonical copy always has `failure_modes`.
        """
        return any(k in self.model_fields_set for k in SREDRILL_KEYS)

    def conflicts(self) -> list[str]:
        """What makes this key contradict itself (once loaded, names canonical); empty when nothing does.

        A scenario whose key contradicts itself cannot be passed: lint reports it as an error and grading
        marks its results errored.
        """
        modes = list(self.failure_modes or ())
        out = [f"failure mode {m!r} is also in ruled_out" for m in modes if m in self.ruled_out]
        out += [f"failure mode {m!r} is also in forbidden_categories" for m in modes if m in self.forbidden_categories]
        if self.root_cause_category.value in self.forbidden_categories and self.root_cause_category.value not in modes:
            out.append(f"category {self.root_cause_category.value!r} is also in forbidden_categories")
        out += [f"decisive names {m!r}, which is not in failure_modes" for m in self.decisive if m not in modes]
        out += [f"refuting names {h!r}, which is not in ruled_out" for h in self.refuting if h not in self.ruled_out]
        return out

    @property
    def is_axis2(self) -> bool:
        """True when the scenario defines Axis 2 reasoning checks."""
        return bool(self.ruling_out_keywords or self.required_queries or self.ruled_out)

    @property
    def expected_failure_modes(self) -> tuple[str, ...]:
        """`failure_modes` as a tuple (empty before the loader fills it)."""
        return tuple(self.failure_modes or ())

    @property
    def forbidden_category_values(self) -> frozenset[Category]:
        """The coarse categories that are forbidden."""
        values = {c.value for c in Category}
        return frozenset(Category(x) for x in self.forbidden_categories if x in values)

    @property
    def forbidden_failure_modes(self) -> frozenset[str]:
        """The failure modes that are forbidden (canonical once loaded)."""
        return frozenset(x for x in self.forbidden_categories if x not in _PURE_CATEGORIES)
