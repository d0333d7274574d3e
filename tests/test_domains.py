"""The domain seam (issue 14): every registered domain is one declaration, and the core knows none of them.

The grep test: no identifier a registered domain declares (its evidence sources, tools, legacy action names,
failure modes, aliases and sets, resource kinds, `scenario.yml` keys) appears in a core module, that is any
module under `src/sredrill/` but `domains/` and the domain's reference-agent package. Identifiers are matched
as whole names in the code (names, attributes, keyword arguments, imported names) and as whole words in
string literals that are not docstrings (a docstring may explain the seam with the first domain's names).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from sredrill.agents.spec import CONNECTORS
from sredrill.diagnosis import Category
from sredrill.scenarios.domain import (
    Domain,
    all_action_targets,
    combined_vocabulary,
    domain_names,
    every_domain,
    get_domain,
)
from sredrill.scenarios.vocabulary import FailureMode

SRC = Path(__file__).resolve().parents[1] / "src" / "sredrill"


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are documentation: a string standing alone as a statement (module,
    class and function docstrings, and the attribute docstrings under fields)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }


def checked(domain: Domain) -> frozenset[str]:
    """The identifiers of a domain the test looks for: those shaped like identifiers (`aws_rds_events`,
    `db-instance`); a plain word it also declares (`engine`, `region`, `failover`) is English, not a name of it."""
    return frozenset(i for i in domain.identifiers() if "_" in i or "-" in i)


def spelled(source: str, identifiers: frozenset[str]) -> Iterator[tuple[int, str]]:
    """(line, identifier) for each identifier `source` spells as a name or as a word of a non-docstring string."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    words = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(map(re.escape, sorted(identifiers))) + r")(?![A-Za-z0-9_])")
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, ast.keyword) and node.arg:
            names = [node.arg]
        elif isinstance(node, ast.alias):
            names = [node.asname or node.name.split(".")[-1]]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            names = words.findall(node.value)
        for name in names:
            if name in identifiers:
                yield getattr(node, "lineno", 0), name


def _agent_package(domain: Domain) -> Path | None:
    """The package of the domain's reference agent: domain code that lives in the agents layer."""
    entry = CONNECTORS.get(domain.reference_agent)
    if entry is None:
        return None
    module = entry.factory.split(":")[0]
    return SRC.parent / Path(*module.split("."))


def _generator_packages() -> list[Path]:
    """Each domain's scenario-generator package (`sredrill.generate.GENERATORS`: `module:attribute`)."""
    from sredrill.generate import GENERATORS

    return [SRC.parent / Path(*target.split(":")[0].split(".")) for target in GENERATORS.values()]


def core_files(domain: Domain) -> list[Path]:
    """Every module but the domains' own: `domains/`, each domain's reference-agent package and each domain's
    scenario-generator package (domain code that lives in the agents and generate layers; two domains may both
    name a tool `get_events`)."""
    owned = [p for p in (_agent_package(d) for d in every_domain()) if p is not None] + _generator_packages()
    out = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if rel.parts[0] == "domains" or any(path.is_relative_to(a) for a in owned):
            continue
        out.append(path)
    return out


@pytest.mark.parametrize("name", domain_names())
def test_the_core_spells_no_identifier_a_domain_declares(name: str) -> None:
    domain = get_domain(name)
    identifiers = checked(domain)
    assert {"aws_rds_events", "query_metrics", "storage_full", "instance_class"} <= identifiers or name != "rds"
    found = []
    for path in core_files(domain):
        rel = str(path.relative_to(SRC))
        found += [f"{rel}:{line}: {ident}" for line, ident in spelled(path.read_text(), identifiers)]
    assert not found, f"core modules spell the {name} domain's identifiers (move them into the domain):\n" + "\n".join(
        found
    )


def test_a_planted_violation_is_caught() -> None:
    rds = checked(get_domain("rds"))
    planted = '''
"""Docstrings may say query_metrics and aws_rds_events."""
TABLE = {"query_metrics": "aws_cloudwatch_metrics"}
def f(scenario):
    """So may this one: storage_full."""
    return scenario.performance_insights, "the metric names are fine", "see instance_class"
'''
    hits = sorted(set(spelled(planted, rds)))
    assert hits == [
        (3, "aws_cloudwatch_metrics"),
        (3, "query_metrics"),
        (6, "instance_class"),
        (6, "performance_insights"),
    ]
    # whole words only: a longer name that contains one is not it
    assert list(spelled("x = 'my_query_metrics_v2 aws_rds_events_old'", rds)) == []


@pytest.mark.parametrize("name", domain_names())
def test_a_domain_is_one_consistent_declaration(name: str) -> None:
    domain = get_domain(name)
    sources = set(domain.source_names)
    assert len(sources) == len(domain.sources)
    assert len(set(domain.tool_names)) == len(domain.tool_names), "a tool is declared once"
    for tool in domain.tools:
        assert tool.source in sources, f"{tool.name} reads an undeclared source {tool.source!r}"
    for source in domain.sources:
        assert any(t.source == source.name for t in domain.tools), f"no tool reads {source.name}"
    assert domain.reference_agent in CONNECTORS


def test_every_rds_tool_has_a_handler_on_its_server() -> None:
    from sredrill.evidence.serving import server_factory
    from sredrill.scenarios import load_pack

    rds = get_domain("rds")
    server = server_factory(rds)(load_pack("rds_postgres").scenarios[0])
    assert set(getattr(server, "_handlers", {})) == {t.name for t in rds.tools}


def test_unknown_domain_in_pack_yml_is_an_input_error_with_did_you_mean(tmp_path: Path) -> None:
    import shutil

    from sredrill.errors import InputError
    from sredrill.scenarios import load_pack

    pack = tmp_path / "p"
    shutil.copytree(load_pack("rds_postgres").root / "001-replication-lag", pack / "001-replication-lag")
    (pack / "pack.yml").write_text("domain: rsd\n")
    with pytest.raises(InputError) as info:
        load_pack(pack)
    assert info.value.field == "domain" and "did you mean 'rds'?" in (info.value.hint or "")
    (pack / "pack.yml").write_text("domain: rds\n")
    assert load_pack(pack).domain == "rds"
    (pack / "pack.yml").unlink()
    assert load_pack(pack).domain == "rds"  # recognised by its files


# A second domain, as the next one (Kubernetes) will be registered: the core's unions must cover both.
SECOND = dataclasses.replace(
    get_domain("rds"),
    name="second",
    failure_modes=(
        FailureMode("pod_evicted", Category.INFRASTRUCTURE, ("kicked_out", "evicted"), "a pod was evicted"),
    ),
    failure_mode_sets={},
)


def test_the_core_covers_every_registered_domain_not_just_one(monkeypatch: pytest.MonkeyPatch) -> None:
    import sredrill.scenarios.domain as registry

    monkeypatch.setattr(registry, "DOMAINS", {**registry.DOMAINS, "second": "tests.test_domains:SECOND"})
    assert [d.name for d in every_domain()] == [*domain_names()] and "second" in domain_names()
    vocabulary = combined_vocabulary()
    # Both domains' modes, and the core's healthy (alias recovered) once.
    assert {"pod_evicted", *get_domain("rds").vocabulary().names} <= set(vocabulary.names)
    assert vocabulary.resolve("recovered") == "healthy" and vocabulary.resolve("kicked_out") == "pod_evicted"
    # An alias two domains declare stays the first domain's (here Kubernetes' `evicted_pods`).
    assert vocabulary.resolve("evicted") == "evicted_pods"
    targets = [t for d in every_domain() for t in d.action_targets("inspect_logs")]
    assert all_action_targets("inspect_logs") == tuple(dict.fromkeys(targets))
    # A baseline given no pack's vocabulary may answer with any registered domain's modes.
    from sredrill.agents.baselines import KeywordAgent

    assert "pod_evicted" in KeywordAgent().vocabulary.names
