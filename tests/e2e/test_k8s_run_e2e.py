"""`sredrill run` over RDS and Kubernetes together (issue 15, item 7): the scoreboard shows each pack beside the
other (counts per axis, gap), then each pack's own table; `reference` investigates the Kubernetes scenarios
with Kubernetes tools; the incidents section is what it is in a run of the incidents alone.

The Kubernetes pack is the test fixture in the upstream EKS layout (`tests/fixtures/k8s_env`).
"""

from __future__ import annotations

from pathlib import Path

from sredrill.scenarios import get_domain, load_pack

from .conftest import Project

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "k8s_env"
RUN = ("run", "--pack", "rds_postgres", "--pack", str(FIXTURE), "--pack", "incidents", "--seeds", "0")
KEY = "k8s-scoreboard-test-episode-key"
"""The task families' episode key, pinned, so both runs play the same incident episodes."""


def section(text: str, title: str) -> list[str]:
    """The lines of the scoreboard section whose title starts with `title`, up to the next blank line."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.replace("┃", "│").split("│")]


def test_the_scoreboard_shows_each_pack_beside_the_other(project: Project) -> None:
    out = project.root / "scoreboard.txt"
    key = project.write("episode.key", KEY)
    keyed = ("--episode-key-file", str(key))
    cli = project.run(*RUN, *keyed, "--axis2", "--agent", "reference", "--output", str(out), timeout=600)
    assert cli.code in (0, 1), cli.stderr
    text = out.read_text()
    rds, k8s = len(load_pack("rds_postgres").scenarios), len(load_pack(FIXTURE).scenarios)

    table = section(text, "RCA scenarios by pack")
    assert "axis 1: full evidence; axis 2: selective evidence" in table[0]
    rows = [cells(line) for line in table[3:]]
    # pack, axis, total, passed, failed, errored, pass rate, gap: two rows (axes) per pack, then every pack's
    # ("all", as a run of one pack labels its totals).
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("rds_postgres", "1", str(rds)),
        ("", "2", str(rds)),
        ("k8s_env", "1", str(k8s)),
        ("", "2", str(k8s)),
        ("all", "1", str(rds + k8s)),
        ("", "2", str(rds + k8s)),
    ]
    assert all(r[7] == "" for r in rows[::2]) and all(r[7].endswith(" pp") for r in rows[1::2])
    for pack, total in (("rds_postgres", rds), ("k8s_env", k8s)):
        own = section(text, f"pack {pack}: RCA scenarios")
        assert cells(own[3])[:4] == ["all", "1", str(total), rows[0 if pack == "rds_postgres" else 2][3]]
    assert any(line.startswith("gap: ") and f"over the {k8s} scenario(s)" in line for line in text.splitlines())

    # The incidents' section is the one a run of the incidents alone prints.
    alone = project.root / "incidents.txt"
    project.run("run", "--pack", "incidents", "--seeds", "0", *keyed, "--agent", "reference", "--output", str(alone))
    title = "incident episodes (task × seed)"
    assert section(text, title) == section(alone.read_text(), title)


def test_reference_investigates_the_kubernetes_scenarios_with_their_tools(project: Project) -> None:
    cli = project.run(*RUN[:5], "--agent", "reference", "--json", timeout=600)
    assert cli.code in (0, 1), cli.stderr
    results = cli.report()["results"]
    # Two domains may share a tool's name (get_events, search_logs): the K8s agent calls the K8s-only ones.
    k8s_only = {t.name for t in get_domain("k8s").tools} - {t.name for t in get_domain("rds").tools}
    mine = [r for r in results if r["file"] == "k8s_env"]
    assert len(mine) == len(load_pack(FIXTURE).scenarios)
    for result in mine:
        assert result["status"] != "errored", result["failure_reason"]
        called = set(result["trajectory"]["tool_calls"])
        assert called & k8s_only, (result["id"], called)
    assert all(r["status"] != "errored" for r in results if r["file"] == "rds_postgres")
