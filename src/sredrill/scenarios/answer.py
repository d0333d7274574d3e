"""`answer.yml`: the ground truth of a scenario, never shown to an agent.

The names it uses that belong to a domain (evidence sources, trajectory actions) are plain strings here; the
loader checks them against the scenario's domain (`scenarios.domain`), with a "did you mean".
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, PositiveInt
from pydantic_core import core_schema

from sredrill.diagnosis import Category

__all__ = ["SREDRILL_KEYS", "AnswerKey", "SourceName"]

SREDRILL_KEYS = ("failure_modes", "ruled_out")
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
    failure_modes: list[str] | None = None
    """sredrill: the true fine-grained root causes (several for a compositional fault)."""
    ruled_out: list[str] = Field(default_factory=list)
    """sredrill: hypotheses (failure modes or categories) a correct diagnosis must dismiss."""

    @property
    def sets_sredrill_keys(self) -> bool:
        """True when the file sets one of `SREDRILL_KEYS` (even to an empty list).

        Read it on the key as parsed: the loader's canonical copy always has `failure_modes`.
        """
        return any(k in self.model_fields_set for k in SREDRILL_KEYS)

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
