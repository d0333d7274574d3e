"""Incident actions: the wire envelope, the typed variants, and an ActionError for every kind of bad input."""

from __future__ import annotations

import pytest

from sredrill.errors import ActionError, InputError
from sredrill.incidents import (
    ALERTS,
    MAX_REPLICAS,
    Action,
    ActionType,
    ClearQueue,
    DeclareHealthy,
    InspectAlert,
    InspectLogs,
    InspectMetrics,
    Metric,
    RestartService,
    ScaleWorkers,
    Service,
    Wait,
    action_rules,
    incident_action_adapter,
    parse_action,
)

API = Service.API_WORKERS


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"action_type": "inspect_logs", "target": "database"}, InspectLogs(target=Service.DATABASE)),
        ({"action_type": "inspect_metrics", "target": "queue_depth"}, InspectMetrics(target=Metric.QUEUE_DEPTH)),
        ({"action_type": "inspect_alert", "target": "alert_db_slow"}, InspectAlert(target="alert_db_slow")),
        ({"action_type": "restart_service", "target": "queue_service"}, RestartService(target=Service.QUEUE_SERVICE)),
        ({"action_type": "scale_workers", "target": "api_workers", "value": 5}, ScaleWorkers(target=API, value=5)),
        ({"action_type": "scale_workers", "target": "api_workers", "value": 5.0}, ScaleWorkers(target=API, value=5)),
        ({"action_type": "clear_queue", "target": None, "value": None, "args": None}, ClearQueue()),
        ({"action_type": "wait"}, Wait()),
        ({"action_type": "declare_healthy"}, DeclareHealthy()),
    ],
)
def test_valid_actions_parse_to_their_typed_variant(data: dict, expected: object) -> None:
    assert parse_action(data) == expected
    assert parse_action(Action.model_validate(data)) == expected


@pytest.mark.parametrize(
    ("data", "field", "allowed", "phrase"),
    [
        ({"action_type": "scale_worker"}, "action_type", {str(t) for t in ActionType}, "did you mean 'scale_workers'"),
        ({"action_type": "inspect_logs"}, "target", {str(s) for s in Service}, "needs a target"),
        ({"action_type": "inspect_logs", "target": "databse"}, "target", {str(s) for s in Service}, "'database'"),
        ({"action_type": "inspect_metrics", "target": "cpu_pct"}, "target", {str(m) for m in Metric}, "cannot target"),
        ({"action_type": "inspect_alert", "target": "cpu"}, "target", set(ALERTS), "cannot target"),
        (
            {"action_type": "restart_service", "target": "database"},
            "target",
            {"api_workers", "queue_service"},
            "restart_database",
        ),
        ({"action_type": "restart_database", "target": "database"}, "target", None, "takes no target"),
        ({"action_type": "scale_workers", "target": "api_workers"}, "value", None, "integer value from 1"),
        ({"action_type": "scale_workers", "target": "api_workers", "value": 0}, "value", None, "got 0"),
        ({"action_type": "scale_workers", "target": "api_workers", "value": 2.5}, "value", None, "got 2.5"),
        ({"action_type": "scale_workers", "target": "api_workers", "value": MAX_REPLICAS + 1}, "value", None, "to 64"),
        (
            {"action_type": "scale_workers", "target": "database", "value": 3},
            "target",
            {"api_workers", "queue_service"},
            "",
        ),
        ({"action_type": "wait", "value": 3}, "value", None, "takes no value"),
        ({"action_type": "wait", "args": {"x": 1}}, "args", None, "takes no args"),
        ({"actio": "wait"}, "actio", {"action_type", "target", "value", "args"}, "did you mean 'action_type'"),
        ({"action_type": "scale_workers", "target": "api_workers", "value": True}, "value", None, ""),
        ({"action_type": "scale_workers", "target": "api_workers", "value": "5"}, "value", None, ""),
        ({}, "action_type", None, "Field required"),
    ],
)
def test_invalid_actions_name_the_field_and_the_allowed_values(
    data: dict, field: str, allowed: set[str] | None, phrase: str
) -> None:
    with pytest.raises(ActionError) as caught:
        parse_action(data)
    error = caught.value
    assert isinstance(error, InputError)  # the server turns it into a 400
    assert error.field == field
    if allowed is not None:
        assert set(error.allowed or ()) == allowed
    assert phrase in str(error)


def test_a_typed_action_is_already_valid() -> None:
    action = ScaleWorkers(target=API, value=3)
    assert parse_action(action) is action


def test_a_non_object_action_is_rejected() -> None:
    with pytest.raises(ActionError, match="JSON object"):
        parse_action(["wait"])  # type: ignore[arg-type]


def test_rules_come_from_the_typed_variants() -> None:
    rules = {r.action_type: r for r in action_rules()}
    assert list(rules) == list(ActionType)
    assert rules[ActionType.SCALE_WORKERS].value_range == (1, MAX_REPLICAS)
    assert rules[ActionType.RESTART_SERVICE].targets == ("api_workers", "queue_service")
    assert rules[ActionType.WAIT].targets is None


def test_typed_actions_round_trip_through_the_envelope() -> None:
    for action in (ScaleWorkers(target=API, value=3), InspectAlert(target="alert_cpu_high"), Wait()):
        envelope = action.to_action()
        assert set(envelope.model_dump()) == {"action_type", "target", "value", "args"}
        assert parse_action(envelope.model_dump(mode="json")) == action


def test_the_union_schema_lists_every_variant_with_its_targets() -> None:
    schema = incident_action_adapter.json_schema()
    assert set(schema["discriminator"]["mapping"]) == {str(t) for t in ActionType}
    restart = schema["$defs"]["RestartService"]["properties"]["target"]
    assert set(restart["enum"]) == {"api_workers", "queue_service"}
