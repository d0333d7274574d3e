"""`POST /mcp`: OpenEnv's JSON-RPC over the environment's actions; every answer is HTTP 200."""

from __future__ import annotations

from typing import Any

import httpx
import pytest


def rpc(client: httpx.Client, method: str, params: dict[str, Any] | None = None, **headers: str) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
    if params is not None:
        body["params"] = params
    answer = client.post("/mcp", json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    data = answer.json()
    assert data["jsonrpc"] == "2.0" and data["id"] == 7
    return data


def test_an_empty_object_is_a_jsonrpc_error_with_http_200(client: httpx.Client) -> None:
    answer = client.post("/mcp", json={})
    assert answer.status_code == 200
    data = answer.json()
    assert data["jsonrpc"] == "2.0" and data["id"] is None
    assert data["error"]["code"] == -32600 and "tools/list" in data["error"]["data"]["methods"]


@pytest.mark.parametrize(("body", "code"), [(b"{nope", -32700), (b"[1]", -32600), (b"", -32600)])
def test_malformed_requests(client: httpx.Client, body: bytes, code: int) -> None:
    answer = client.post("/mcp", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 200 and answer.json()["error"]["code"] == code


def test_tools_list_needs_no_session(client: httpx.Client) -> None:
    tools = rpc(client, "tools/list")["result"]["tools"]
    names = [t["name"] for t in tools]
    assert names[0] == "inspect_logs" and "declare_healthy" in names and len(names) == 11
    scale = next(t for t in tools if t["name"] == "scale_workers")
    assert scale["inputSchema"]["required"] == ["target", "value"]
    # Strict schemas carry bounds as words (fine-tuned models reject `minimum`/`maximum`); the action checks them.
    assert scale["inputSchema"]["properties"]["value"] == {"type": "integer", "description": "From 1 to 64."}
    assert "action_type" not in scale["inputSchema"]["properties"]


def test_tools_call_steps_the_default_session(client: httpx.Client) -> None:
    client.post("/reset", json={"task_id": "hard_mixed", "seed": 0})
    result = rpc(client, "tools/call", {"name": "inspect_alert", "arguments": {"target": "alert_pool_exhaustion"}})
    call = result["result"]
    assert call["isError"] is False
    assert call["structuredContent"]["reward"] == 0.5 and call["structuredContent"]["info"]["step"] == 1
    assert call["content"][0]["type"] == "text" and '"reward":0.5' in call["content"][0]["text"]
    assert client.get("/state").json()["step_count"] == 1


def test_tools_call_on_a_named_session(client: httpx.Client) -> None:
    named = client.post("/reset", json={"task_id": "medium_cascade"}).headers["X-Session-Id"]
    client.post("/reset", json={"task_id": "hard_mixed"})  # now the default session is another one
    rpc(client, "tools/call", {"name": "wait", "arguments": {}}, **{"X-Session-Id": named})
    rpc(client, "tools/call", {"name": "wait", "session_id": named})
    assert client.get("/state", headers={"X-Session-Id": named}).json()["step_count"] == 2
    assert client.get("/state").json()["step_count"] == 0


def test_an_invalid_action_is_a_tool_error_with_the_allowed_values(client: httpx.Client) -> None:
    client.post("/reset", json={})
    call = rpc(client, "tools/call", {"name": "inspect_logs", "arguments": {"target": "nginx"}})["result"]
    assert call["isError"] is True
    assert call["structuredContent"]["error"]["allowed"] == ["api_workers", "database", "queue_service"]
    assert "nginx" in call["content"][0]["text"]


def test_calls_without_an_episode_say_how_to_start_one(client: httpx.Client) -> None:
    call = rpc(client, "tools/call", {"name": "wait"})["result"]
    assert call["isError"] is True and "POST /reset" in call["content"][0]["text"]


def test_unknown_tools_and_methods(client: httpx.Client) -> None:
    client.post("/reset", json={})
    unknown = rpc(client, "tools/call", {"name": "reboot", "arguments": {}})["error"]
    assert unknown["code"] == -32602 and "wait" in unknown["data"]["allowed"]
    missing = rpc(client, "tools/call", {"arguments": {}})["error"]
    assert missing["code"] == -32602 and "name" in missing["message"]
    method = rpc(client, "resources/list")["error"]
    assert method["code"] == -32601 and "tools/call" in method["data"]["methods"]
    bad_session = rpc(client, "tools/call", {"name": "wait", "session_id": "nope"})["error"]
    assert bad_session["code"] == -32602


def test_openenv_session_create_and_close(client: httpx.Client) -> None:
    created = rpc(client, "openenv/session/create", {"task_id": "hard_mixed", "seed": 3})["result"]
    session = created["session_id"]
    assert created["reset"]["info"]["task_id"] == "hard_mixed"
    tools = rpc(client, "tools/list", {"session_id": session})["result"]["tools"]
    assert "restart_database" in [t["name"] for t in tools]
    call = rpc(client, "tools/call", {"name": "restart_database", "session_id": session})["result"]
    assert call["structuredContent"]["reward"] == 5.0
    assert rpc(client, "openenv/session/close", {"session_id": session})["result"] == {
        "session_id": session,
        "closed": True,
    }
    assert rpc(client, "openenv/session/close", {"session_id": session})["error"]["code"] == -32602
    bad = rpc(client, "openenv/session/create", {"task_id": "nope"})["error"]
    assert bad["code"] == -32602 and "hard_mixed" in bad["data"]["allowed"]


def test_initialize_ping_and_notifications(client: httpx.Client) -> None:
    init = rpc(client, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})["result"]
    assert init["capabilities"] == {"tools": {"listChanged": False}}
    assert rpc(client, "ping")["result"] == {}
    note = client.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert note.status_code == 202 and note.content == b""


def test_rca_tasks_list_their_own_tools(serve: Any) -> None:
    with serve(packs=["rds_postgres"]) as server, httpx.Client(base_url=server.url) as http:
        rca = next(t["task_id"] for t in http.get("/tasks").json()["tasks"] if t["kind"] == "rca")
        http.post("/reset", json={"task_id": rca})
        names = [t["name"] for t in rpc(http, "tools/list")["result"]["tools"]]
        assert names == ["inspect_alert", "inspect_metrics", "inspect_logs", "submit_diagnosis"]
