"""The vocabulary is published (issue 16, item 1): the prompt and the tool catalogue list the pack's failure modes
with their descriptions and synonyms, the same text for every scenario of a pack; declared synonyms resolve; a
diagnosis naming an unknown failure mode is refused back to the agent, which may resubmit."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from sredrill.agents import ToolHost
from sredrill.diagnosis import Category, Diagnosis
from sredrill.env import make, rca_task_id
from sredrill.errors import ActionError, PackError
from sredrill.evidence import RcaToolset, tool_specs
from sredrill.scenarios import FailureMode, Pack, Vocabulary, blind_alert, get_domain, leak_needles, load_pack
from sredrill.scenarios.domain import every_domain, submit_description
from sredrill.sdk.scenario import ScenarioCase
from sredrill.trajectory import Recorder, ToolError
from tests.support.scenario_builder import answer, build_pack, scenario_yml

BUILTIN = {name: load_pack(name) for name in ("rds_postgres", "k8s")}


def submit_spec(pack: Pack, folder: str | None = None) -> dict[str, Any]:
    scenario = pack.scenario(folder) if folder else pack.scenarios[0]
    (spec,) = [
        s for s in RcaToolset(scenario, "full", vocabulary=pack.vocabulary).specs() if s.name == "submit_diagnosis"
    ]
    return spec.model_dump(mode="json")


def failure_modes_text(spec: dict[str, Any]) -> str:
    text: str = spec["input_schema"]["properties"]["failure_modes"]["description"]
    return text


# -- the published text ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("pack_name", list(BUILTIN))
def test_the_catalogue_lists_every_mode_with_its_category_description_and_synonyms(pack_name: str) -> None:
    vocabulary = BUILTIN[pack_name].vocabulary
    lines = vocabulary.catalogue().splitlines()
    listed = [line[2:].split(" ", 1)[0] for line in lines if line.startswith("- ") and "=" not in line]
    assert sorted(listed) == sorted(vocabulary.modes) and listed[-1] == "unknown"
    for mode in vocabulary.modes.values():
        (line,) = [x for x in lines if x.startswith(f"- {mode.name} [")]
        assert f"[{mode.category.value}]" in line and mode.description in line
        assert all(alias in line for alias in (*mode.aliases, *mode.synonyms))
    assert lines[-1] == "Categories (for category): " + ", ".join(c.value for c in Category)


def test_the_catalogue_names_sets_and_a_packs_own_modes(tmp_path: Path) -> None:
    assert (
        "- dual_resource_exhaustion = cpu_saturation + storage_full" in BUILTIN["rds_postgres"].vocabulary.catalogue()
    )
    pack = extended_pack(tmp_path)
    text = pack.vocabulary.catalogue()
    assert "- plan_regression [code_defect]: a new query plan is slower (also: bad_plan)" in text
    assert text.index("plan_regression") < text.index("- unknown [")  # `unknown` stays last
    assert "plan_regression" not in get_domain("rds").vocabulary().catalogue()


def test_the_synonyms_people_write_are_declared_and_resolve() -> None:
    rds, k8s = BUILTIN["rds_postgres"].vocabulary, BUILTIN["k8s"].vocabulary
    for name, mode in [("replica_lag", "replication_lag"), ("Replica Lag", "replication_lag"),
                       ("disk_full", "storage_full"), ("too_many_connections", "connection_exhaustion"),
                       ("cpu_exhaustion", "cpu_saturation"), ("checkpoint_storm", "checkpoint_io_storm"),
                       ("multi_az_failover", "failover"), ("recovered", "healthy")]:  # fmt: skip
        assert rds.resolve(name) == mode, name
    for name, mode in [("crash_looping", "crashloop_backoff"), ("pods_pending", "pending_pod"),
                       ("dns_error", "dns_resolution_failure"), ("Node NotReady", "node_not_ready"),
                       ("stalled_rollout", "deployment_rollout_stuck"), ("invalid_config", "bad_config")]:  # fmt: skip
        assert k8s.resolve(name) == mode, name


def test_a_synonym_that_is_the_evidences_own_word_is_not_blinded() -> None:
    # `replica_lag` resolves, but it spells CloudWatch's ReplicaLag: the alert keeps the metric it fired on and
    # the metric's series id is no leak. The check can fail: the same name as an alias would be blinded.
    pack = BUILTIN["rds_postgres"]
    scenario = pack.scenario("001-replication-lag")
    assert "replica_lag" in pack.vocabulary.synonyms and "replica_lag" not in pack.vocabulary.identifiers()
    assert "replica_lag" not in leak_needles(scenario, pack.vocabulary)
    assert "ReplicaLag" in blind_alert(scenario, pack.vocabulary).title
    own = [m for m in pack.vocabulary.modes.values() if m.name not in ("healthy", "unknown")]
    as_alias = Vocabulary.builtin([dataclasses.replace(m, aliases=(*m.aliases, *m.synonyms), synonyms=()) for m in own])
    assert "ReplicaLag" not in blind_alert(scenario, as_alias).title


def test_a_pack_mode_cannot_take_a_synonyms_name() -> None:
    with pytest.raises(PackError, match="'disk_full' is defined twice"):
        BUILTIN["rds_postgres"].vocabulary.extended([FailureMode("disk_full", Category.RESOURCE_EXHAUSTION)])


# -- the prompt and the catalogue an agent gets ---------------------------------------------------------------


@pytest.mark.parametrize("pack_name", list(BUILTIN))
def test_the_prompt_is_the_domains_then_the_published_vocabulary_for_every_scenario(pack_name: str) -> None:
    pack = BUILTIN[pack_name]
    domain = get_domain(pack.domain)
    published = domain.task_prompt(pack.vocabulary)
    assert published == f"{domain.prompt}\n\n{pack.vocabulary.catalogue()}"
    # What an agent is asked, by the entry point `sredrill run` and SDK tests share.
    prompts = {ScenarioCase(pack, s).prompt for s in pack.scenarios}
    assert prompts == {published}


@pytest.mark.parametrize("pack_name", list(BUILTIN))
def test_submit_diagnosis_lists_the_packs_vocabulary_the_same_for_every_scenario(pack_name: str) -> None:
    pack = BUILTIN[pack_name]
    specs = {json.dumps(submit_spec(pack, s.folder), sort_keys=True) for s in pack.scenarios}
    assert len(specs) == 1
    (spec,) = map(json.loads, specs)
    assert pack.vocabulary.catalogue() in failure_modes_text(spec)
    assert spec["description"] == submit_description(get_domain(pack.domain))


def test_a_packs_own_modes_reach_the_catalogue(tmp_path: Path) -> None:
    pack = extended_pack(tmp_path)
    assert "plan_regression" in failure_modes_text(submit_spec(pack))
    assert "plan_regression" not in failure_modes_text(
        next(s.model_dump() for s in tool_specs(get_domain("rds")) if s.name == "submit_diagnosis")
    )


@pytest.mark.parametrize("domain", every_domain(), ids=lambda d: d.name)
def test_submit_diagnosis_says_how_to_cite_with_an_example_that_is_a_diagnosis(domain: Any) -> None:
    text = submit_description(domain)
    phrases = ['"id"', "rising, falling, flat", "above/below value", "absent", "present", "start/end", "supports",
               "At most 3 per claim, 8 distinct items", "ruled_out[].evidence", "location"]  # fmt: skip
    assert [p for p in phrases if p not in text] == []
    example = Diagnosis.model_validate_json(text.split("Example: ", 1)[1])
    assert example.claims[0].citations[0].item == "event-0a1b2c3d4e" and example.location == ["<resource>"]
    assert example.ruled_out[0].citations[0].item == "log-5d6e7f8a9b"


@pytest.mark.parametrize("domain", every_domain(), ids=lambda d: d.name)
def test_every_tool_description_fits_1024_characters(domain: Any) -> None:
    # OpenAI's chat completions (and servers that copy it) reject a longer function description.
    long = {s.name: len(s.description) for s in tool_specs(domain) if len(s.description) > 1024}
    assert long == {}


# -- submit_diagnosis: synonyms resolve, an unknown mode is refused -------------------------------------------


def rds_tools() -> RcaToolset:
    pack = BUILTIN["rds_postgres"]
    return RcaToolset(pack.scenario("001-replication-lag"), "full", vocabulary=pack.vocabulary)


@pytest.mark.parametrize(
    "modes", [["replica_lag"], ["Replication Lag"], ["disk_full", "cpu_saturation"], ["dual_resource_exhaustion"]]
)
async def test_submit_accepts_modes_synonyms_and_sets(modes: list[str]) -> None:
    tools = rds_tools()
    assert await tools.call("submit_diagnosis", {"root_cause": "x", "failure_modes": modes}) == {"accepted": True}
    assert tools.submitted is not None and tools.submitted.failure_modes == modes


async def test_an_unknown_failure_mode_is_refused_with_did_you_mean_and_the_known_modes() -> None:
    tools = rds_tools()
    await tools.call("submit_diagnosis", {"root_cause": "first", "failure_modes": ["replication_lag"]})
    audit = tools.audit
    with pytest.raises(ToolError) as info:
        await tools.call("submit_diagnosis", {"root_cause": "second", "failure_modes": ["replication_lagg", "cpu"]})
    assert info.value.code == "unknown_failure_mode"
    message = info.value.message
    assert "'replication_lagg' is not a known failure mode (did you mean 'replication_lag'?)" in message
    assert "'cpu' is not a known failure mode" in message
    assert "known failure modes: " + ", ".join(tools.vocabulary.names) in message
    assert "not accepted" in message and "submit_diagnosis again" in message
    assert tools.submitted is not None and tools.submitted.root_cause == "first"  # the last accepted one stands
    assert tools.audit == audit  # a refused call answered nothing
    # Corrected, it is accepted.
    await tools.call("submit_diagnosis", {"root_cause": "third", "failure_modes": ["replication_lag"]})
    assert tools.submitted.root_cause == "third"


async def test_a_category_given_as_a_failure_mode_is_refused_as_such() -> None:
    tools = rds_tools()
    with pytest.raises(ToolError) as info:
        await tools.call("submit_diagnosis", {"root_cause": "x", "failure_modes": ["resource_exhaustion"]})
    assert "'resource_exhaustion' is a category, not a failure mode (put it in category)" in info.value.message
    assert tools.submitted is None


async def test_a_packs_own_modes_and_aliases_are_accepted_and_another_domains_are_not(tmp_path: Path) -> None:
    pack = extended_pack(tmp_path)
    tools = RcaToolset(pack.scenarios[0], "full", vocabulary=pack.vocabulary)
    for modes in (["plan_regression"], ["bad_plan"]):
        assert await tools.call("submit_diagnosis", {"root_cause": "x", "failure_modes": modes}) == {"accepted": True}
    with pytest.raises(ToolError) as info:
        await tools.call("submit_diagnosis", {"root_cause": "x", "failure_modes": ["oom_killed"]})
    assert "plan_regression" in info.value.message and info.value.code == "unknown_failure_mode"


def extended_pack(tmp_path: Path) -> Pack:
    """An RDS pack whose pack.yml adds a failure mode (with an alias and a description)."""
    pack_yml = {
        "failure_modes": {
            "plan_regression": {
                "category": "code_defect",
                "aliases": ["bad_plan"],
                "description": "a new query plan is slower",
            }
        }
    }
    files: dict[str, object] = {
        "scenario.yml": scenario_yml("001-slow-plan", failure_mode="plan_regression", severity="warning"),
        "answer.yml": answer(root_cause_category="code_defect", required_keywords=["plan"]),
    }
    return build_pack(tmp_path / "extended", {"001-slow-plan": files, "002-quiet": {}}, pack_yml=pack_yml)


async def test_over_http_the_refusal_is_a_400_with_its_code_and_a_resubmission_is_accepted() -> None:
    # What a `cmd:` or remote agent sees, on a real loopback tool server.
    tools, recorder = rds_tools(), Recorder()
    host = ToolHost()
    try:
        access = await host.open("run-1", tools, recorder)
        headers = {"Authorization": f"Bearer {access.token}"}
        async with httpx.AsyncClient() as http:
            url = f"{access.tools_url}/tools/submit_diagnosis"
            refused = await http.post(url, json={"root_cause": "x", "failure_modes": ["disk_ful"]}, headers=headers)
            assert refused.status_code == 400
            error = refused.json()["error"]
            assert error["code"] == "unknown_failure_mode" and "did you mean 'disk_full'?" in error["message"]
            assert tools.submitted is None
            accepted = await http.post(url, json={"root_cause": "x", "failure_modes": ["disk_full"]}, headers=headers)
            assert accepted.status_code == 200 and accepted.json() == {"result": {"accepted": True}}
    finally:
        await host.aclose()
    assert tools.submitted is not None and tools.submitted.failure_modes == ["disk_full"]


def test_an_environment_episode_refuses_an_unknown_mode_without_ending() -> None:
    env = make(rca_task_id("rds_postgres", "001-replication-lag"), seed=0)
    env.reset()
    submit = {"action_type": "submit_diagnosis", "args": {"root_cause": "x", "failure_modes": ["replica_lagg"]}}
    with pytest.raises(ActionError, match="did you mean 'replica_lag'"):
        env.step(submit)
    done = env.step({**submit, "args": {"root_cause": "x", "failure_modes": ["replica_lag"]}})
    assert done.done


def test_a_pack_file_declares_synonyms_that_resolve_and_are_published() -> None:
    from sredrill.scenarios import PackConfig

    config = PackConfig.model_validate(
        {"failure_modes": {"wal_archive_stuck": {"category": "infrastructure", "synonyms": ["archiver-stuck"]}}}
    )
    vocabulary = config.vocabulary(get_domain("rds").vocabulary())
    assert vocabulary.resolve("archiver_stuck") == "wal_archive_stuck"
    assert "archiver_stuck" in vocabulary.catalogue()
