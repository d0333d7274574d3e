"""Reporters: how a run is shown (console scoreboard, JSON RunReport, JUnit XML).

Examples:
    >>> import sys
    >>> from sredrill.engine.reporters import make_reporter
    >>> reporter = make_reporter("console", output=None, stdout=sys.stdout, stderr=sys.stderr)
"""

from sredrill.engine.reporters.base import Reporter, ReporterName, make_reporter
from sredrill.engine.reporters.console import ConsoleReporter
from sredrill.engine.reporters.json_reporter import JsonReporter
from sredrill.engine.reporters.junit import JUnitReporter

__all__ = ["ConsoleReporter", "JUnitReporter", "JsonReporter", "Reporter", "ReporterName", "make_reporter"]
