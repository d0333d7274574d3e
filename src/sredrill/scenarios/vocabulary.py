"""The vocabulary of failure modes: names, categories, aliases, and the keyword alias table of one pack.

A `Vocabulary` is built per pack, never kept process-wide: the core's `healthy` (alias `recovered`) and
`unknown`, the failure modes its domain declares as data (`Domain.vocabulary()`), plus whatever the pack's
`pack.yml` adds (`Vocabulary.extended`). Every alias is resolved here, in one place (STYLE #6).

Examples:
    >>> v = Vocabulary.builtin([FailureMode("disk_full", Category.RESOURCE_EXHAUSTION, ("no_space",))])
    >>> v.resolve("no_space")
    'disk_full'
    >>> v.resolve("recovered")
    'healthy'
    >>> v.category_of("disk_full")
    <Category.RESOURCE_EXHAUSTION: 'resource_exhaustion'>
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sredrill.diagnosis import Category
from sredrill.errors import PackError, did_you_mean

__all__ = ["HEALTHY", "UNKNOWN", "FailureMode", "Vocabulary", "normalize_keyword", "normalize_name"]

_LINT_HINT = "fix the name, then check with: sredrill scenarios lint --pack PATH"


@dataclass(frozen=True, slots=True)
class FailureMode:
    """One fine-grained root cause, with its coarse category and the other names it goes by."""

    name: str
    category: Category
    aliases: tuple[str, ...] = ()
    """Other names of the mode (the seed's, the upstream suite's): identifiers, blinded like the name."""
    description: str = ""
    synonyms: tuple[str, ...] = ()
    """More names that resolve to the mode but are ordinary words of the domain's evidence (`replica_lag` spells
    CloudWatch's `ReplicaLag`): accepted in a diagnosis and published, but not identifiers, so blind mode and
    the leak rule leave the evidence's own words alone."""


# The failure modes every domain has. A domain's own come between them (`Vocabulary.builtin`), in the order
# it declares them. Tuples, so nothing here can be mutated at run time (STYLE #33).
HEALTHY = FailureMode(
    "healthy", Category.HEALTHY, ("recovered",), "nothing is wrong; alerts are noise or already recovered"
)
UNKNOWN = FailureMode("unknown", Category.UNKNOWN, (), "the evidence fits no known failure mode")

_SEPARATORS = re.compile(r"[\s\-]+")
_SPACES = re.compile(r"\s+")


def normalize_name(name: str) -> str:
    """A failure-mode name as compared: lower case, spaces and hyphens as underscores."""
    return _SEPARATORS.sub("_", name.strip().lower())


def normalize_keyword(keyword: str) -> str:
    """A keyword as compared: lower case, whitespace collapsed (DESIGN §5)."""
    return _SPACES.sub(" ", keyword.strip().lower())


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """The failure modes, categories and keyword aliases one pack may use.

    Build it with `Vocabulary.builtin(...)` (a domain's) and `extended(...)` (a pack's); the mappings are read-only.
    """

    modes: Mapping[str, FailureMode]
    """Canonical name -> failure mode."""
    sets: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    """A name that stands for several canonical failure modes (`dual_resource_exhaustion`)."""
    keyword_aliases: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    """Normalised keyword -> the spelling variants accepted for it."""
    _aliases: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), repr=False)
    """Alias or synonym -> canonical name."""
    _synonyms: frozenset[str] = field(default_factory=frozenset, repr=False)

    @classmethod
    def builtin(cls, modes: Iterable[FailureMode] = (), sets: Mapping[str, Iterable[str]] | None = None) -> Vocabulary:
        """The core's `healthy` and `unknown` with a domain's failure modes and sets between them, a fresh object.

        A domain's vocabulary is `Domain.vocabulary()`, which calls this with its declared modes.
        """
        base = (HEALTHY, *modes, UNKNOWN)
        return cls._build(base, {normalize_name(k): tuple(map(normalize_name, v)) for k, v in (sets or {}).items()}, {})

    def extended(
        self,
        extra_modes: Iterable[FailureMode] = (),
        *,
        sets: Mapping[str, Iterable[str]] | None = None,
        keyword_aliases: Mapping[str, Iterable[str]] | None = None,
        source: str = "pack.yml",
    ) -> Vocabulary:
        """This vocabulary extended by a pack's own failure modes, sets and keyword aliases (`pack.yml`).

        Args:
            extra_modes: failure modes the pack adds; their names and aliases must be new.
            sets: names that stand for several failure modes.
            keyword_aliases: keyword -> spelling variants accepted for it.
            source: the file the extensions come from, for error messages.

        Raises:
            PackError: a name is defined twice, or a set names an unknown failure mode.
        """
        all_sets = dict(self.sets)
        for name, members in (sets or {}).items():
            all_sets[normalize_name(name)] = tuple(normalize_name(m) for m in members)
        # The base's aliases (its domain's) stay; the pack's add spellings, to a keyword of its own or to one of them.
        aliases: dict[str, list[str]] = {k: list(v) for k, v in self.keyword_aliases.items()}
        for key, variants in (keyword_aliases or {}).items():
            aliases.setdefault(normalize_keyword(key), []).extend(variants)
        return self._build((*self.modes.values(), *extra_modes), all_sets, aliases, source=source)

    @classmethod
    def _build(
        cls,
        modes: Iterable[FailureMode],
        sets: Mapping[str, tuple[str, ...]],
        keyword_aliases: Mapping[str, Iterable[str]],
        *,
        source: str = "pack.yml",
    ) -> Vocabulary:
        by_name: dict[str, FailureMode] = {}
        aliases: dict[str, str] = {}
        taken = {c.value for c in Category if c.value not in {"healthy", "unknown"}}
        for mode in modes:
            names = [mode.name, *mode.aliases, *mode.synonyms]
            for n in names:
                if n in by_name or n in aliases or n in taken:
                    raise PackError(
                        f"failure mode {n!r} is defined twice (or clashes with a category)",
                        path=source,
                        field=f"failure_modes.{mode.name}",
                        hint="give it a new name, or drop the duplicate",
                    )
            by_name[mode.name] = mode
            aliases.update({a: mode.name for a in (*mode.aliases, *mode.synonyms)})
        for name, members in sets.items():
            if name in by_name or name in aliases:
                raise PackError(
                    f"{name!r} is both a failure mode and a set of failure modes",
                    path=source,
                    field=f"failure_mode_sets.{name}",
                    hint="rename the set",
                )
            for m in members:
                if m not in by_name and m not in aliases:
                    raise PackError(
                        f"set {name!r} names an unknown failure mode {m!r}",
                        path=source,
                        field=f"failure_mode_sets.{name}",
                        allowed=by_name,
                        hint=did_you_mean(m, by_name) or _LINT_HINT,
                    )
        kw = {
            normalize_keyword(k): tuple(dict.fromkeys(normalize_keyword(v) for v in vs))
            for k, vs in keyword_aliases.items()
        }
        return cls(
            modes=MappingProxyType(by_name),
            sets=MappingProxyType({k: tuple(aliases.get(m, m) for m in v) for k, v in sets.items()}),
            keyword_aliases=MappingProxyType(kw),
            _aliases=MappingProxyType(aliases),
            _synonyms=frozenset(s for mode in by_name.values() for s in mode.synonyms),
        )

    @property
    def names(self) -> tuple[str, ...]:
        """The canonical failure-mode names, sorted."""
        return tuple(sorted(self.modes))

    def identifiers(self) -> frozenset[str]:
        """Every name this vocabulary knows: failure modes, aliases, sets and category values (not the synonyms,
        which are the evidence's own words)."""
        return frozenset({*self.modes, *self._aliases, *self.sets, *(c.value for c in Category)} - self._synonyms)

    def is_failure_mode(self, name: str) -> bool:
        """True when `name` (or an alias of it) is a single failure mode."""
        n = normalize_name(name)
        return n in self.modes or n in self._aliases

    def is_set(self, name: str) -> bool:
        """True when `name` stands for several failure modes (`dual_resource_exhaustion`)."""
        return normalize_name(name) in self.sets

    @property
    def synonyms(self) -> frozenset[str]:
        """The names that resolve to a failure mode but are the evidence's own words (`FailureMode.synonyms`)."""
        return self._synonyms

    @staticmethod
    def is_category(name: str) -> bool:
        """True when `name` is one of the 8 coarse categories."""
        return normalize_name(name) in {c.value for c in Category}

    def resolve(self, name: str, *, path: str | None = None, field: str | None = None) -> str:
        """The canonical name of one failure mode, aliases resolved.

        Raises:
            PackError: the name is unknown (with "did you mean"), or stands for several failure modes.
        """
        n = normalize_name(name)
        if n in self.modes:
            return n
        if n in self._aliases:
            return self._aliases[n]
        if n in self.sets:
            raise PackError(
                f"{name!r} stands for several failure modes: {', '.join(self.sets[n])}",
                path=path,
                field=field,
                hint="list them one by one, or use resolve_all()",
            )
        raise self._unknown(name, path=path, field=field)

    def resolve_all(
        self, names: Iterable[str], *, path: str | None = None, field: str | None = None
    ) -> tuple[str, ...]:
        """The canonical failure modes that `names` stand for, sets expanded, sorted and unique.

        Raises:
            PackError: a name is unknown; `field` gets the item's index.
        """
        out: set[str] = set()
        for i, name in enumerate(names):
            n = normalize_name(name)
            item = f"{field}[{i}]" if field else None
            out.update(self.sets[n] if n in self.sets else (self.resolve(name, path=path, field=item),))
        return tuple(sorted(out))

    def category_of(self, mode: str) -> Category:
        """The coarse category of a failure mode (aliases accepted).

        Raises:
            PackError: the failure mode is unknown.
        """
        return self.modes[self.resolve(mode)].category

    def catalogue(self) -> str:
        """The vocabulary as every agent of a pack is told it: each failure mode with its category, one-line
        description and synonyms, the sets, and the categories (issue 16: the vocabulary is published).

        The text depends on the vocabulary alone, so every scenario of a pack gets it byte for byte (it is
        pack-wide text, which DESIGN §2 lets name failure modes); the task prompt and the `submit_diagnosis`
        schema both carry this one text.

        Examples:
            >>> print(Vocabulary.builtin().catalogue().splitlines()[1])
            - healthy [healthy]: nothing is wrong; alerts are noise or already recovered (also: recovered)
        """
        # `unknown` last, after any mode a pack's pack.yml adds (they come after it in `modes`).
        modes = sorted(self.modes.values(), key=lambda m: m.name == UNKNOWN.name)
        lines = ["Failure modes (for failure_modes: one or more of these names, or a synonym given after 'also'):"]
        for mode in modes:
            line = f"- {mode.name} [{mode.category.value}]"
            if mode.description:
                line += f": {mode.description}"
            if mode.aliases or mode.synonyms:
                line += f" (also: {', '.join((*mode.aliases, *mode.synonyms))})"
            lines.append(line)
        if self.sets:
            lines.append("Names for several failure modes at once:")
            lines += [f"- {name} = {' + '.join(members)}" for name, members in self.sets.items()]
        lines.append("Categories (for category): " + ", ".join(c.value for c in Category))
        return "\n".join(lines)

    def keyword_variants(self, keyword: str) -> tuple[str, ...]:
        """The keyword itself (normalised) followed by the spelling variants `pack.yml` accepts for it."""
        k = normalize_keyword(keyword)
        return (k, *(v for v in self.keyword_aliases.get(k, ()) if v != k))

    def _unknown(self, name: str, *, path: str | None, field: str | None) -> PackError:
        known = [*self.modes, *self._aliases, *self.sets]
        hint = did_you_mean(normalize_name(name), known)
        return PackError(
            f"{name!r} is not a known failure mode",
            path=path,
            field=field,
            allowed=self.modes,
            hint=(hint + "\n  " if hint else "") + "fix the value or add it to pack.yml, then check with: "
            "sredrill scenarios lint --pack PATH",
        )
