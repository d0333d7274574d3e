"""The `sredrill` command line: parse, call one layer function, render (STYLE #21)."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Fire drills for AI SRE agents.")


def main() -> None:
    app()
