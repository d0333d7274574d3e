"""The failure-mode vocabulary: aliases, sets, categories, pack extensions, no shared state."""

from __future__ import annotations

import pytest

from sredrill.diagnosis import Category
from sredrill.domains.rds import DOMAIN as RDS
from sredrill.errors import PackError
from sredrill.scenarios import FailureMode, PackConfig, Vocabulary


def test_builtin_modes_categories_and_aliases() -> None:
    v = RDS.vocabulary()
    assert v.names == (
        "checkpoint_io_storm",
        "connection_exhaustion",
        "cpu_saturation",
        "failover",
        "healthy",
        "replication_lag",
        "storage_full",
        "unknown",
    )
    assert v.resolve("storage_exhaustion") == "storage_full"
    assert v.resolve("multi_az_failover_health_check") == "failover"
    assert v.resolve(" Replication-Lag ") == "replication_lag"
    assert v.category_of("failover") is Category.INFRASTRUCTURE
    assert v.category_of("storage_exhaustion") is Category.RESOURCE_EXHAUSTION
    assert v.category_of("healthy") is Category.HEALTHY


def test_dual_resource_exhaustion_is_a_set() -> None:
    v = RDS.vocabulary()
    assert v.resolve_all(["dual_resource_exhaustion", "cpu_saturation"]) == ("cpu_saturation", "storage_full")
    with pytest.raises(PackError, match="stands for several failure modes"):
        v.resolve("dual_resource_exhaustion")


def test_unknown_name_gets_did_you_mean_and_location() -> None:
    with pytest.raises(PackError) as info:
        RDS.vocabulary().resolve_all(
            ["healthy", "conection_exhaustion"], path="p/001-x/answer.yml", field="failure_modes"
        )
    e = info.value
    assert (e.path, e.field) == ("p/001-x/answer.yml", "failure_modes[1]")
    assert "did you mean 'connection_exhaustion'?" in (e.hint or "")
    assert "replication_lag" in (e.allowed or [])


def test_pack_extension_and_keyword_aliases() -> None:
    config = PackConfig.model_validate(
        {
            "failure_modes": {"lock_contention": {"category": "resource_exhaustion", "aliases": ["lock_storm"]}},
            "failure_mode_sets": {"locks_and_cpu": ["lock_storm", "cpu_saturation"]},
            "keyword_aliases": {"Multi-AZ": ["multi az", "MultiAZ"]},
        }
    )
    v = config.vocabulary(RDS.vocabulary())
    assert v.resolve("lock_storm") == "lock_contention"
    assert v.resolve_all(["locks_and_cpu"]) == ("cpu_saturation", "lock_contention")
    assert v.keyword_variants("multi-az") == ("multi-az", "multi az", "multiaz")
    assert "lock_contention" not in RDS.vocabulary().modes, "a pack's vocabulary never leaks into another"


@pytest.mark.parametrize(
    ("modes", "sets", "match"),
    [
        ([FailureMode("failover", Category.INFRASTRUCTURE)], {}, "defined twice"),
        ([FailureMode("resource_exhaustion", Category.RESOURCE_EXHAUSTION)], {}, "clashes with a category"),
        ([], {"pair": ["cpu_saturation", "cpu_saturaton"]}, "unknown failure mode 'cpu_saturaton'"),
        ([], {"failover": ["cpu_saturation"]}, "both a failure mode and a set"),
    ],
)
def test_invalid_extensions_are_rejected(modes: list[FailureMode], sets: dict[str, list[str]], match: str) -> None:
    with pytest.raises(PackError, match=match):
        RDS.vocabulary().extended(modes, sets=sets)


def test_identifiers_cover_modes_aliases_sets_and_categories() -> None:
    ids = RDS.vocabulary().identifiers()
    assert {"storage_exhaustion", "dual_resource_exhaustion", "resource_exhaustion", "cpu_saturation"} <= ids
    assert Vocabulary.is_category("Resource-Exhaustion") and not Vocabulary.is_category("cpu_saturation")


def test_recovered_resolves_to_healthy_in_every_domain() -> None:
    core = Vocabulary.builtin()
    assert core.names == ("healthy", "unknown")
    assert core.resolve("recovered") == "healthy" == RDS.vocabulary().resolve("Recovered")


def test_a_packs_keyword_aliases_add_to_its_domains() -> None:
    from sredrill.scenarios import get_domain, load_pack

    domain = get_domain("k8s").vocabulary()
    extended = domain.extended(keyword_aliases={"CrashLoopBackOff": ["restart loop"], "quota": ["quotas"]})
    assert extended.keyword_aliases["crashloopbackoff"][-1] == "restart loop"
    assert set(domain.keyword_aliases["crashloopbackoff"]) < set(extended.keyword_aliases["crashloopbackoff"])
    assert extended.keyword_aliases["quota"] == ("quotas",)
    # The built-in k8s pack has a pack.yml of its own: the domain's aliases are still there.
    assert set(domain.keyword_aliases) <= set(load_pack("k8s").vocabulary.keyword_aliases)
