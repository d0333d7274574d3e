"""`pack.yml`: a pack's domain, its additions to the vocabulary (failure modes, sets, keyword aliases), and how a
generated pack was made."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from sredrill.diagnosis import Category
from sredrill.scenarios.vocabulary import FailureMode, Vocabulary, normalize_name

__all__ = ["PackConfig", "PackFailureMode", "PackGenerated"]


class PackFailureMode(BaseModel):
    """A failure mode a pack adds, under its canonical name."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    category: Category
    aliases: list[str] = Field(default_factory=list)
    description: str = ""
    synonyms: list[str] = Field(default_factory=list)
    """Names that resolve to the mode and are published, but are ordinary words of the evidence (not blinded)."""


class PackGenerated(BaseModel):
    """How a generated pack was made (`sredrill generate`): the same spec and version give the same files."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    generator: str
    """The generator's name (`sredrill.generate.GENERATORS`: `rds`)."""
    version: str
    """The generator's version when it wrote the pack."""
    spec: str
    """The spec it wrote, as `sredrill run --generate` takes it (`rds:seed=7:count=20`)."""


class PackConfig(BaseModel):
    """The keys of `pack.yml` (optional, at the pack root). A format we own: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    schema_version: str = "1.0"
    description: str = ""
    domain: str | None = None
    """The registered domain the pack's scenarios belong to (`scenarios.domain.DOMAINS`); default: recognised
    from the scenario folders' files."""
    failure_modes: dict[str, PackFailureMode] = Field(default_factory=dict)
    """New failure modes, by canonical name, each with its category and aliases."""
    failure_mode_sets: dict[str, list[str]] = Field(default_factory=dict)
    """Names that stand for several failure modes at once (like the built-in `dual_resource_exhaustion`)."""
    keyword_aliases: dict[str, list[str]] = Field(default_factory=dict)
    """Keyword -> spelling variants a grader accepts for it (`autoscaling: [auto-scaling, autoscaled]`)."""
    training_split: str | None = None
    """The pack whose labels the `majority` baseline may learn its prior from (a built-in pack's name, or a
    folder relative to this pack): never the pack itself, which is graded."""
    generated: PackGenerated | None = None
    """Set by `sredrill generate`: the generator, its version and the spec the pack's scenarios came from."""

    def vocabulary(self, base: Vocabulary, *, source: str = "pack.yml") -> Vocabulary:
        """`base` (the domain's vocabulary) extended by this file.

        Raises:
            PackError: a name is defined twice or a set names an unknown failure mode.
        """
        modes = [
            FailureMode(
                normalize_name(name),
                spec.category,
                tuple(normalize_name(a) for a in spec.aliases),
                spec.description,
                tuple(normalize_name(s) for s in spec.synonyms),
            )
            for name, spec in self.failure_modes.items()
        ]
        return base.extended(modes, sets=self.failure_mode_sets, keyword_aliases=self.keyword_aliases, source=source)
