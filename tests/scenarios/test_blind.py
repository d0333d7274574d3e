"""Blind mode: what `blind_alert` strips, what it keeps, and who may build a `BlindAlert`."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from sredrill.scenarios import BlindAlert, blind_alert, find_leaks, leak_needles, load_pack, reference_sentences
from tests.support.scenario_builder import REPLICA, T0, alert, answer, scenario_yml, write_scenario

FOLDER = "007-replication-lag-hidden"


def load_one(pack_dir: Path, alert_json: dict[str, object], **answer_over: object):  # type: ignore[no-untyped-def]
    write_scenario(
        pack_dir,
        FOLDER,
        {
            "scenario.yml": scenario_yml(FOLDER, failure_mode="replication_lag", severity="critical"),
            "alert.json": alert_json,
            "answer.yml": answer(root_cause_category="resource_exhaustion", **answer_over),
        },
    )
    pack = load_pack(pack_dir)
    return pack.scenarios[0], pack.vocabulary


def leaky_alert() -> dict[str, object]:
    a = alert(
        rds_failure_mode="replication_lag",
        suspected_symptom="Replication Lag",
        root_cause_category="resource_exhaustion",
        read_replica=REPLICA,
        summary=f"Replication lag on {REPLICA} (replication_lag) in drill {FOLDER}",
        error="aws_rds_replication_lag_maximum breached; see runbook replication-lag-hidden",
    )
    a["title"] = f"[{FOLDER}] Replication lag above 600 seconds"
    a["commonLabels"]["failure_mode"] = "replication_lag"  # type: ignore[index]
    a["receiver"] = "pagerduty"
    a["alerts"] = [{"labels": {"scenario": FOLDER, "host": "db-1"}, "annotations": {"note": "cpu_saturation? no"}}]
    a["startsAt"] = "2024-05-01T10:09:00Z"
    return a


def test_blind_alert_strips_answer_keys_identifiers_and_ids(pack_dir: Path) -> None:
    scenario, vocabulary = load_one(pack_dir, leaky_alert())
    blind = blind_alert(scenario, vocabulary)
    payload = blind.to_payload()
    text = json.dumps(payload)
    assert "rds_failure_mode" not in blind.annotations and "root_cause_category" not in blind.annotations
    assert "suspected_symptom" not in blind.annotations  # its whole value is a failure mode, in any spelling
    assert "failure_mode" not in blind.labels
    assert blind.annotations["summary"] == f"on {REPLICA} in drill"
    assert blind.annotations["error"] == "breached; see runbook"
    assert blind.title == "above 600 seconds"  # the mode's natural words go too: the alert says what fired
    assert blind.annotations["read_replica"] == REPLICA
    assert payload["receiver"] == "pagerduty" and payload["alerts"] == [
        {"labels": {"host": "db-1"}, "annotations": {"note": "? no"}}
    ]
    assert payload["startsAt"] == "2024-05-01T10:09:00Z"
    assert find_leaks(text, leak_needles(scenario, vocabulary)) == []


def test_starts_at_defaults_to_the_metric_window_midpoint(pack_dir: Path) -> None:
    scenario, vocabulary = load_one(pack_dir, alert())
    blind = blind_alert(scenario, vocabulary)
    assert isinstance(blind.starts_at, datetime) and blind.starts_at > T0
    assert blind.to_payload()["startsAt"] == "2024-05-01T10:07:30Z"


def test_only_blind_alert_builds_a_blind_alert() -> None:
    with pytest.raises(TypeError, match="built only by blind_alert"):
        BlindAlert("t", "alerting", "cloudwatch", {}, {}, None, {})


def test_leak_needles(pack_dir: Path) -> None:
    response = (
        "ROOT_CAUSE: The nightly import floods the replica with write-ahead log it cannot replay.\n"
        "VALIDATED_CLAIMS:\n- Lag grows by forty seconds per minute on the mirror. [evidence: aws_cloudwatch_metrics]\n"
        "- Short claim here.\n"
    )
    scenario, vocabulary = load_one(pack_dir, alert(), model_response=response)
    needles = leak_needles(scenario, vocabulary)
    assert {FOLDER, "replication-lag-hidden", f"drillpack/{FOLDER}"} <= needles
    assert {"replication_lag", "resource_exhaustion", "storage_exhaustion", "dual_resource_exhaustion"} <= needles
    assert "failover" not in needles and "healthy" not in needles  # one-word names are ordinary words
    assert "the nightly import floods the replica with write-ahead log it cannot replay" in needles
    assert "lag grows by forty seconds per minute on the mirror" in needles
    assert not any("short claim" in n for n in needles)
    assert find_leaks("LAG GROWS BY FORTY   seconds per minute on the mirror!", needles) == [
        "lag grows by forty seconds per minute on the mirror"
    ]


def test_a_one_word_slug_is_not_a_needle(pack_dir: Path) -> None:
    write_scenario(pack_dir, "001-healthy")
    pack = load_pack(pack_dir)
    needles = leak_needles(pack.scenarios[0], pack.vocabulary)
    assert "healthy" not in needles and "001-healthy" in needles


def test_reference_sentences_drop_headers_tags_and_short_fragments() -> None:
    text = (
        "ROOT_CAUSE_CATEGORY: resource_exhaustion\nCAUSAL_CHAIN:\n"
        "- the nightly batch job starts at midnight -> WAL volume grows twentyfold\n"
        "1) Replay on the mirror cannot keep up at all. [evidence: aws_cloudwatch_metrics]\n"
    )
    assert reference_sentences(text) == (
        "the nightly batch job starts at midnight",
        "replay on the mirror cannot keep up at all",
    )


def upstream_style_alert() -> dict[str, object]:
    """An alert as the upstream suites write them: cause names in Title case, camel case and plain words."""
    a = alert(
        summary="Replication Lag detected on the read replica",
        suspected_symptom="CPU Saturation",
        description="Resource Exhaustion suspected; cause unknown; Unhealthy replica",
    )
    a["title"] = f"[synthetic-rds] Replication Lag On {REPLICA}"
    a["commonLabels"]["alertname"] = "HighReplicationLag"  # type: ignore[index]
    a["commonLabels"]["ReplicationLagSeconds"] = "640"  # type: ignore[index]
    a["runbook"] = {"title": "Storage-Full runbook", "steps": ["check Failover events", "check (failover)"]}
    return a


def test_blind_alert_removes_every_word_form_of_every_name(pack_dir: Path) -> None:
    raw = upstream_style_alert()
    scenario, vocabulary = load_one(pack_dir, raw)
    needles = leak_needles(scenario, vocabulary)
    assert find_leaks(json.dumps(raw), needles, vocabulary=vocabulary) == [
        "cpu_saturation",
        "failover",
        "replication_lag",
        "resource_exhaustion",
        "storage_full",
    ]
    blind = blind_alert(scenario, vocabulary)
    assert blind.title == f"[synthetic-rds] On {REPLICA}"
    assert blind.labels["alertname"] == "High"
    assert "ReplicationLagSeconds" not in blind.labels  # its key names a failure mode
    assert "suspected_symptom" not in blind.annotations  # nothing but a failure mode: the entry goes
    assert blind.annotations["summary"] == "detected on the read replica"
    # `unknown` is an ordinary word, and `Unhealthy` is not `healthy`
    assert blind.annotations["description"] == "suspected; cause unknown; Unhealthy replica"
    assert blind.extra["runbook"] == {"title": "runbook", "steps": ["check events", "check"]}
    assert find_leaks(json.dumps(blind.to_payload()), needles, vocabulary=vocabulary) == []


def test_a_text_of_nothing_but_names_drops_its_entry(pack_dir: Path) -> None:
    scenario, vocabulary = load_one(pack_dir, alert(note="Replication lag / storage full", other="[failover]"))
    blind = blind_alert(scenario, vocabulary)
    assert blind.annotations["note"] == "/"
    assert "other" not in blind.annotations  # an empty value left under its key would still say where it was


def test_names_a_removal_joins_are_removed_too(pack_dir: Path) -> None:
    scenario, vocabulary = load_one(pack_dir, alert(summary="ReplicationReplicationHealthyLagLag on the replica"))
    assert blind_alert(scenario, vocabulary).annotations["summary"] == "on the replica"


def test_blinding_a_hostile_100_kb_alert(pack_dir: Path) -> None:
    hostile = alert(
        # 5,000 names nested in each other, each removal joining the next: past a few passes the text goes whole
        summary="Replication" * 5_000 + "Healthy" + "Lag" * 5_000,
        description="a" * 40_000 + " " * 30_000 + "OOM" * 1_000 + " done",
    )
    hostile["title"] = "HighReplication" + "-" * 50_000 + "Lag on " + REPLICA
    scenario, vocabulary = load_one(pack_dir, hostile)
    blind = blind_alert(scenario, vocabulary)
    assert blind.title == "High on " + REPLICA
    assert "summary" not in blind.annotations
    assert blind.annotations["description"] == "a" * 40_000 + " " + "OOM" * 1_000 + " done"
    assert find_leaks(json.dumps(blind.to_payload()), leak_needles(scenario, vocabulary), vocabulary=vocabulary) == []
