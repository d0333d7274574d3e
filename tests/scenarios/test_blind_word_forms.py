"""`WordForms`: a name found and removed in every word form, on camel-aware word boundaries, in linear time."""

from __future__ import annotations

import pytest

from sredrill.scenarios.phrases import WordForms

FORMS = WordForms.of(
    ["healthy", "oom_killed", "oom_kill", "replication_lag", "image_pull_backoff", "crash_loop", "node_not_ready"]
)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("oom_killed", "oom_killed"),
        ("OOM Killed", "oom_killed"),
        ("Oom Killed", "oom_killed"),
        ("oom-killed", "oom_killed"),
        ("OOMKilled", "oom_killed"),
        ("OOMKILLED", "oom_killed"),
        ("KubernetesPodOOMKilled", "oom_killed"),
        ("alert: KubernetesContainerOOMKilled fired", "oom_killed"),
        ("HighReplicationLag", "replication_lag"),
        ("Replication lag on ledger-db", "replication_lag"),
        ("REPLICATION_LAG", "replication_lag"),
        ("aws_rds_replication_lag_maximum", "replication_lag"),
        ("image-pull backoff", "image_pull_backoff"),
        ("ImagePullBackOff", "image_pull_backoff"),
        ("image pull back-off", "image_pull_backoff"),
        ("KubernetesNodeNotReady", "node_not_ready"),
        ("3 OOM kills since noon", "oom_kill"),
        ("pods crash-looping in storefront", "crash_loop"),
        ("Healthy", "healthy"),
        ("ledger-healthy-db", "healthy"),
        ("healthy2", "healthy"),
        ("FOOHealthy", "healthy"),
    ],
)
def test_every_word_form_of_a_name_is_found(text: str, name: str) -> None:
    assert FORMS.find(text) == [name]
    assert FORMS.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "Unhealthy node",  # `healthy` inside a word: no case change, no boundary
        "healthyish",
        "Xhealthy",
        "ReplicationLagoon",
        "OOMKillerDaemon",
        "replication is lagging",
        "an image was pulled",
        "",
    ],
)
def test_a_name_inside_a_longer_word_is_not_found(text: str) -> None:
    assert FORMS.find(text) == []
    assert not FORMS.search(text)
    assert FORMS.remove(text) == text


@pytest.mark.parametrize(
    ("text", "left"),
    [
        ("KubernetesPodOOMKilled", "KubernetesPod"),
        ("High replication-lag on ledger-db", "High  on ledger-db"),
        ("ledger-healthy-db", "ledger-db"),  # one joiner kept between the words either side
        ("healthy-db", "db"),
        ("ledger_healthy", "ledger"),
        ("ledger-healthy (probe)", "ledger (probe)"),
        ("[OOMKilled] cart-api", "[] cart-api"),  # brackets and spaces are the caller's to tidy
        ("cart-api OOM-killed, then ready", "cart-api, then ready"),  # but not a space before punctuation
        ("OOM Killed, Replication Lag and an Unhealthy node", ",  and an Unhealthy node"),
    ],
)
def test_removal_takes_the_dangling_joiner_with_it(text: str, left: str) -> None:
    assert FORMS.remove(text) == left
    assert FORMS.find(left) == []


def test_the_longest_name_wins_and_each_is_reported_by_the_first_name_that_spells_it() -> None:
    forms = WordForms.of(["crashloop_backoff", "crash_loop_backoff", "crashloop"])
    assert forms.find("CrashLoopBackOff") == ["crashloop_backoff"]
    assert forms.remove("a CrashLoopBackOff b") == "a  b"  # not `BackOff` left over from `crashloop`
    assert WordForms.of([]).find("CrashLoopBackOff") == [] and WordForms.of(["_"]).remove("x") == "x"


@pytest.mark.parametrize(
    ("text", "found", "kept"),
    [
        ("a" * 100_000, [], 100_000),
        ("o_" * 50_000, [], 100_000),
        ("Oo" * 50_000, [], 100_000),
        ("OOM" * 33_334, [], 100_002),
        ("oom" + "_" * 100_000 + "killed", ["oom_killed"], 0),  # joiner runs are read once, possessively
        (" " * 100_000 + "OOMKilled", ["oom_killed"], 100_000),
        ("healthyX" * 12_500, ["healthy"], 100_000 - len("healthy")),  # only the first is a word of its own
        ("Replication Lag " * 6_250, ["replication_lag"], 6_250),
    ],
)
def test_hostile_100_kb_texts(text: str, found: list[str], kept: int) -> None:
    # A guard against quadratic matching (each would take minutes); no timing is asserted.
    assert FORMS.find(text) == found
    assert len(FORMS.remove(text)) == kept
