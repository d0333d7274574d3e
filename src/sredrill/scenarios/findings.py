"""Lint findings: one result of a check on a pack (`Finding`), an error or a warning (`Severity`).

Their own module so that a domain's lint rules (declared with the domain, `scenarios.domain`) and the core's
(`scenarios.lint`) build the same type without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Finding", "Severity", "error", "warning"]


class Severity(StrEnum):
    """An error blocks a run; a warning never does."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Finding:
    """One lint result: where, what, and how to fix it."""

    severity: Severity
    rule: str
    """`load`, `contradiction`, `leak`, `consistency`, or a domain's rule (`unit`, `dimension`, …)."""
    path: str
    """The file, relative to the pack's parent (`rds_postgres/003-storage-full/answer.yml`)."""
    field: str | None
    message: str
    fix: str

    def render(self) -> str:
        """`severity: path: field: message` and the fix on the next line."""
        where = ": ".join(p for p in (self.path, self.field) if p)
        return f"{self.severity.value}: {where}: {self.message}" + (f"\n  {self.fix}" if self.fix else "")


def error(rule: str, path: str, field: str | None, message: str, fix: str) -> Finding:
    """An error finding (it blocks a run)."""
    return Finding(Severity.ERROR, rule, path, field, message, fix)


def warning(rule: str, path: str, field: str | None, message: str, fix: str) -> Finding:
    """A warning finding (it never blocks a run)."""
    return Finding(Severity.WARNING, rule, path, field, message, fix)
