"""The alert carries no field whose presence predicts the answer (`predictive_fields`), and blinding is for the
alert only: a Kubernetes scenario's evidence keeps its native reasons (`OOMKilled`, `CrashLoopBackOff`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sredrill.evidence import RcaToolset
from sredrill.scenarios import Severity, blind_alert, builtin_pack_names, find_leaks, leak_needles, lint_pack, load_pack
from sredrill.scenarios.blind import PredictiveField, predictive_fields
from tests.support.scenario_builder import alert, answer, scenario_yml, write_scenario

K8S_SMALL = Path(__file__).resolve().parent.parent / "fixtures" / "k8s_small"


def write(pack_dir: Path, folder: str, *, healthy: bool, **annotations: str) -> None:
    files: dict[str, object] = {"alert.json": alert(**annotations)}
    if not healthy:
        files["scenario.yml"] = scenario_yml(folder, failure_mode="cpu_saturation", severity="critical")
        files["answer.yml"] = answer(root_cause_category="resource_exhaustion")
    write_scenario(pack_dir, folder, files)


def test_a_field_only_the_faulty_alerts_carry_or_fill_is_predictive(pack_dir: Path) -> None:
    write(pack_dir, "001-ok", healthy=True, error="", shift="night")
    write(pack_dir, "002-ok", healthy=True, error="  ")
    write(pack_dir, "003-hot", healthy=False, error="CPU above 90%", ticket="INC-1", shift="day")
    write(pack_dir, "004-hot", healthy=False, error="CPU above 95%", ticket="INC-2")
    found = predictive_fields(load_pack(pack_dir))
    assert found == [
        PredictiveField("commonAnnotations.error", "non-empty", in_healthy=False, healthy=2, faulty=2),
        PredictiveField("commonAnnotations.ticket", "present", in_healthy=False, healthy=2, faulty=2),
    ]  # `shift` is on both sides: it predicts nothing
    assert found[0].describe() == (
        "commonAnnotations.error is non-empty in all 2 faulty scenarios and in none of the 2 healthy ones: "
        "whether it is empty tells an agent the answer"
    )
    assert found[1].describe().endswith("its presence tells an agent the answer")


def test_a_field_only_the_healthy_alerts_carry_is_predictive_too(pack_dir: Path) -> None:
    write(pack_dir, "001-ok", healthy=True, digest="daily")
    write(pack_dir, "002-ok", healthy=True, digest="weekly")
    write(pack_dir, "003-hot", healthy=False)
    write(pack_dir, "004-hot", healthy=False)
    (found,) = predictive_fields(load_pack(pack_dir))
    assert (found.field, found.signal, found.in_healthy) == ("commonAnnotations.digest", "present", True)
    assert found.describe().startswith("commonAnnotations.digest is present in all 2 healthy scenarios and in none")


def test_one_scenario_of_a_kind_proves_nothing(pack_dir: Path) -> None:
    write(pack_dir, "001-ok", healthy=True, error="")
    write(pack_dir, "002-hot", healthy=False, error="CPU above 90%")
    write(pack_dir, "003-hot", healthy=False, error="CPU above 95%")
    assert predictive_fields(load_pack(pack_dir)) == []


def test_the_check_reads_the_blinded_alert(pack_dir: Path) -> None:
    # `root_cause` goes whatever its value, and a value of nothing but a failure mode goes with its entry.
    write(pack_dir, "001-ok", healthy=True)
    write(pack_dir, "002-ok", healthy=True)
    write(pack_dir, "003-hot", healthy=False, root_cause="a runaway query", symptom="CPU Saturation")
    write(pack_dir, "004-hot", healthy=False, root_cause="a runaway query", symptom="cpu-saturation")
    assert predictive_fields(load_pack(pack_dir)) == []


@pytest.fixture
def k8s_pack(tmp_path: Path) -> Path:
    """A writable copy of the K8s fixture pack: 2 healthy scenarios and 3 faults, in the upstream layout."""
    dest = tmp_path / "k8s_small"
    shutil.copytree(K8S_SMALL, dest)
    return dest


def edit_alert(pack: Path, folder: str, **changes: object) -> None:
    path = pack / folder / "alert.json"
    data = json.loads(path.read_text())
    for key, value in changes.items():
        section, _, name = key.rpartition("__")
        target = data[section] if section else data
        if value is None:
            target.pop(name, None)
        else:
            target[name] = value
    path.write_text(json.dumps(data))


def test_upstream_style_error_annotations_are_dropped_by_the_k8s_rules_and_caught_elsewhere(k8s_pack: Path) -> None:
    pack = load_pack(k8s_pack)
    assert sorted(s.category.value == "healthy" for s in pack.scenarios) == [False, False, False, True, True]
    # `error` is "" exactly in the healthy scenarios, as upstream's: the K8s domain's BlindRules drop it.
    assert {s.alert.common_annotations["error"] == "" for s in pack.scenarios if s.category.value == "healthy"} == {
        True
    }
    assert predictive_fields(pack) == []
    # The same field under a name no rule knows is found by the generic guard, and lint warns.
    for folder in (p.name for p in k8s_pack.iterdir() if p.is_dir()):
        error = json.loads((k8s_pack / folder / "alert.json").read_text())["commonAnnotations"]["error"]
        edit_alert(k8s_pack, folder, commonAnnotations__error=None, commonAnnotations__error_text=error)
    renamed = load_pack(k8s_pack)
    (found,) = predictive_fields(renamed)
    assert (found.field, found.signal, found.healthy, found.faulty) == (
        "commonAnnotations.error_text",
        "non-empty",
        2,
        3,
    )
    (warning,) = [f for f in lint_pack(renamed) if f.rule == "predictive_field"]
    assert (warning.severity, warning.path, warning.field) == (
        Severity.WARNING,
        "k8s_small/*/alert.json",
        "commonAnnotations.error_text",
    )
    assert "BlindRules.answer_keys" in warning.fix


async def test_a_k8s_alert_is_blinded_in_every_word_form_and_the_evidence_keeps_its_native_reasons(
    k8s_pack: Path,
) -> None:
    folder = "001-ledger-memory"
    edit_alert(
        k8s_pack,
        folder,
        title="[synthetic-k8s] ledger-api OOM-killed, then CrashLoopBackOff",
        commonLabels__alertname="KubernetesPodOOMKilled",
        commonAnnotations__suspected_symptom="OOM Killed",
        commonAnnotations__description="Pods are crash-looping; not Unhealthy nodes",
    )
    pack = load_pack(k8s_pack)
    scenario = pack.scenario(folder)
    tools = RcaToolset(scenario, "full", vocabulary=pack.vocabulary)
    seen = await tools.call("get_alert", {})
    assert seen["title"] == "[synthetic-k8s] ledger-api, then"
    assert seen["labels"]["alertname"] == "KubernetesPod"
    assert seen["annotations"]["description"] == "Pods are; not Unhealthy nodes"
    for dropped in ("suspected_symptom", "k8s_failure_mode", "error"):
        assert dropped not in seen["annotations"]
    needles = leak_needles(scenario, pack.vocabulary)
    assert find_leaks(json.dumps(seen), needles, vocabulary=pack.vocabulary) == []
    pods = json.dumps(await tools.call("list_pods", {}))
    assert "OOMKilled" in pods and "CrashLoopBackOff" in pods  # evidence is what the cluster recorded
    assert find_leaks(pods, needles) == []  # and no literal needle (ids, snake identifiers, reference sentences)
    assert [f.render() for f in lint_pack(pack) if f.severity is Severity.ERROR] == []


@pytest.mark.parametrize("name", builtin_pack_names())
def test_no_built_in_pack_has_a_predictive_field_or_a_word_form_left_in_an_alert(name: str) -> None:
    pack = load_pack(name)
    assert pack.scenarios and predictive_fields(pack) == []
    for s in pack.scenarios:
        payload = json.dumps(blind_alert(s, pack.vocabulary).to_payload())
        assert find_leaks(payload, leak_needles(s, pack.vocabulary), vocabulary=pack.vocabulary) == [], s.folder
