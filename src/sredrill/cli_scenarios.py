"""`sredrill scenarios list|show|lint`: inspect and check scenario packs (thin: parse, call, render).

Registered in `cli.py` with `app.add_typer(scenarios_app, name="scenarios")`. stdout carries the result (the
table, the scenario, the findings); problems running the command go to stderr as one `error:` line, exit 2.
Importing this module loads neither pydantic nor rich: `sredrill --help` stays fast; the commands import
what they need.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

from sredrill.errors import ExitCode, InputError, PackError, did_you_mean

if TYPE_CHECKING:
    from rich.console import Console

    from sredrill.scenarios import Pack, Scenario
    from sredrill.scenarios.domain import View

__all__ = ["scenarios_app"]

scenarios_app = typer.Typer(no_args_is_help=True, add_completion=False, help="Inspect and check scenario packs.")

_PACK_HELP = "A built-in pack name or a pack folder; default: every built-in pack."


def _out() -> Console:
    from rich.console import Console

    # Piped output (files, CI logs, tests) gets a wide console, so tables are not cut to 80 columns.
    return Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 200)


def _err() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


@contextmanager
def _input_errors() -> Iterator[None]:
    """An InputError becomes one `error:` message on stderr and exit 2, without traceback (STYLE #24)."""
    try:
        yield
    except InputError as exc:
        _err().print(f"error: {exc.render()}", markup=False)
        raise typer.Exit(ExitCode.USAGE_ERROR) from None


def _packs(pack: str | None) -> list[Pack]:
    from sredrill.scenarios import builtin_pack_names, load_pack

    return [load_pack(pack)] if pack else [load_pack(name) for name in builtin_pack_names()]


def _report_broken(packs: list[Pack]) -> None:
    for p in packs:
        for error in p.errors:
            _err().print(f"error: {error.render()}", markup=False)


@scenarios_app.command("list")
def list_scenarios(
    pack: str | None = typer.Option(None, "--pack", help=_PACK_HELP),
    json_: bool = typer.Option(False, "--json", help="One JSON row per scenario (docs/scenarios.md)."),
) -> None:
    """List the scenarios of a pack: id, difficulty, failure modes, category, Axis 2."""
    from rich.table import Table

    with _input_errors():
        packs = _packs(pack)
    if json_:
        rows: list[dict[str, object]] = []
        for p in packs:
            for s in p.scenarios:
                rows.append({"id": f"{p.name}/{s.folder}", "pack": p.name, "folder": s.folder,
                             "difficulty": s.difficulty, "failure_modes": list(s.failure_modes),
                             "category": s.category.value, "axis2": s.is_axis2, "loads": True})  # fmt: skip
            for folder in p.broken:
                rows.append({"id": f"{p.name}/{folder}", "pack": p.name, "folder": folder, "difficulty": None,
                             "failure_modes": None, "category": None, "axis2": None, "loads": False})  # fmt: skip
        typer.echo(json.dumps(rows, indent=2))
        _report_broken(packs)
        return
    table = Table(box=None, pad_edge=False)
    for column in ("id", "difficulty", "failure modes", "category", "axis2"):
        table.add_column(column)
    for p in packs:
        prefix = f"{p.name}/" if len(packs) > 1 else ""
        for s in p.scenarios:
            table.add_row(
                prefix + s.folder,
                str(s.difficulty),
                ", ".join(s.failure_modes),
                s.category.value,
                "yes" if s.is_axis2 else "no",
            )
        for folder in p.broken:
            table.add_row(prefix + folder, "-", "(does not load: run `sredrill scenarios lint`)", "-", "-")
    _out().print(table)
    _report_broken(packs)


@scenarios_app.command("show")
def show_scenario(
    scenario_id: str = typer.Argument(..., metavar="ID", help="A folder name (003-storage-full) or pack/folder."),
    pack: str | None = typer.Option(None, "--pack", help=_PACK_HELP),
) -> None:
    """Show one scenario: metadata, alert, evidence summary and answer key."""
    with _input_errors():
        scenario = _find(scenario_id, pack)
    _render(scenario, _out().print)


def _find(scenario_id: str, pack: str | None) -> Scenario:
    if pack is None and "/" in scenario_id:
        pack, _, scenario_id = scenario_id.partition("/")
    packs = _packs(pack)
    for p in packs:
        folder = scenario_id.removeprefix(f"{p.name}/")
        if folder in p.folders:
            return p.scenario(folder)
    known = [f for p in packs for f in p.folders]
    hint = did_you_mean(scenario_id, known)
    raise PackError(
        f"no scenario {scenario_id!r}" + (f" in pack {pack!r}" if pack else " in the built-in packs"),
        allowed=known,
        hint=(hint + "\n  " if hint else "") + "list them with: sredrill scenarios list [--pack P]",
    )


def _render(s: Scenario, say: Callable[..., None]) -> None:
    from sredrill.scenarios import ScenarioMetadata, get_domain

    m, a = s.metadata, s.answer
    domain = get_domain(s.domain)
    say(f"[bold]{s.qualified_id}[/bold]  difficulty {s.difficulty}  axis2 {'yes' if s.is_axis2 else 'no'}")
    # The domain's own scenario.yml keys (an RDS instance's engine and class, …), whatever the domain.
    own = [k for k in type(m).model_fields if k not in ScenarioMetadata.model_fields]
    shown = [f"{k}={getattr(m, k)}" for k in own if getattr(m, k) not in (None, "", [], ())]
    say(f"{s.domain}: {', '.join(shown) or '(no keys of its own)'}", markup=False)
    say(f"severity: {m.severity}    adversarial: {'; '.join(m.adversarial_signals) or 'none'}", markup=False)
    say("\n[bold]alert[/bold] (as written; agents get the blinded alert)")
    say(json.dumps(s.alert.model_dump(mode="json", by_alias=True, exclude_none=True), indent=2), markup=False)
    for spec in domain.views:
        if s.has_source(spec.source):
            _render_view(spec.build(s), say)
    say("\n[bold]answer[/bold] (never shown to agents)")
    say(f"  category: {a.root_cause_category.value}    failure modes: {', '.join(s.failure_modes)}")
    for label, values in (
        ("required keywords", a.required_keywords),
        ("forbidden", a.forbidden_categories + a.forbidden_keywords),
        ("required evidence", [str(e) for e in a.required_evidence_sources]),
        ("ruled out", a.ruled_out),
        ("ruling-out keywords", a.ruling_out_keywords or []),
        ("required queries", a.required_queries or []),
    ):
        if values:
            say(f"  {label}: {', '.join(values)}", markup=False)


def _render_view(view: View, say: Callable[..., None]) -> None:
    """One evidence view as text: the same four generic kinds the UI draws."""
    say(f"\n[bold]{view.title}[/bold]")
    if view.kind == "series":
        for title, unit, points in view.series:
            values = [v for _, v in points]
            span = f"min={min(values):.4g} max={max(values):.4g}" if values else ""
            say(f"  {title:<60} {unit:<13} n={len(values):<3} {span}".rstrip(), markup=False)
    elif view.kind == "timeline":
        for moment, text in view.events:
            say(f"  {moment:%Y-%m-%d %H:%M:%S}  {text}", markup=False)
    elif view.kind == "table":
        say("  " + " | ".join(view.columns), markup=False)
        for row in view.rows:
            say("  " + " | ".join(row), markup=False)
    else:
        say("\n".join(f"  {line}" for line in view.text.splitlines()), markup=False)


@scenarios_app.command("lint")
def lint(
    folder: str | None = typer.Argument(None, metavar="[PACK]", help="The same as --pack: " + _PACK_HELP),
    pack: str | None = typer.Option(None, "--pack", help=_PACK_HELP),
) -> None:
    """Check packs: errors (exit 1) block a run; warnings do not."""
    from sredrill.scenarios import Severity, lint_pack

    with _input_errors():
        if folder is not None and pack is not None and folder != pack:
            raise InputError(
                f"two packs given: {folder!r} and --pack {pack!r}", hint="give the pack once, as PACK or --pack"
            )
        packs = _packs(pack or folder)
    out = _out()
    errors = 0
    for p in packs:
        findings = lint_pack(p)
        for f in findings:
            out.print(f.render(), markup=False)
        n_err = sum(f.severity is Severity.ERROR for f in findings)
        errors += n_err
        out.print(
            f"{p.name}: {len(p.scenarios)} scenarios loaded, {n_err} errors, {len(findings) - n_err} warnings",
            markup=False,
        )
    if errors:
        raise typer.Exit(ExitCode.TESTS_FAILED)
