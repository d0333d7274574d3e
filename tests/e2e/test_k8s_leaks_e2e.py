"""An oracle attempt on the Kubernetes domain (issue 15, item 4): a `cmd:` agent run by `sredrill run` that tries
to reach the answer key, and gets nothing of it.

The agent reads files relative to its cwd (`answer.yml`, `../answer.yml`, `*/answer.yml`), looks for a pack path
in its argv, its environment and the Task, asks the tools for `answer.yml` (path-like values in every string
argument of every K8s tool, unknown tools named like files), and walks the tool server's URL space and its MCP
resources. Whatever it got must carry no leak needle and no field of an answer key.

What this proves is what the toolset and the blinded payloads guarantee: no tool serves a file, nothing sredrill
sends names the pack's folder. It does not prove the filesystem is out of reach: an agent that knows or finds
where the pack lives (the repository's `tests/fixtures`, the installed `sredrill` package, the parent process's
command line in `/proc`) can read it. Closing that is issue 17 (a sandbox).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from sredrill.scenarios import Pack, builtin_pack_names, find_leaks, leak_needles, load_pack

from .conftest import Project

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "eks_layout"
BUILTIN_K8S = [name for name in builtin_pack_names() if load_pack(name).domain == "k8s"]
PACKS: dict[str, Pack] = {p.name: p for p in (load_pack(FIXTURE), *(load_pack(n) for n in BUILTIN_K8S))}
ARGS = [a for name in PACKS for a in ("--pack", str(FIXTURE) if name == FIXTURE.name else name)]
# The field names of an answer key (ours and upstream's): only a served answer.yml would say them.
ANSWER_FIELDS = (
    "root_cause_category", "model_response", "required_keywords", "forbidden_categories", "forbidden_keywords",
    "ruling_out_keywords", "optimal_trajectory", "max_investigation_loops", "required_evidence_sources",
)  # fmt: skip

# Tools an agent might hope for; each is unknown_tool (the oracle sends them `{"path": "answer.yml"}`).
FILE_TOOLS = ("answer.yml", "../answer.yml", "read_file", "get_answer", "get_answer_key", "cat", "open")
# The pack roots, as an agent that guessed where packs live would write them (no scenario folder is named).
GUESSES = [str(Path(p.root).resolve()) for p in PACKS.values()]

ORACLE = """
import glob, json, os, sys, urllib.error, urllib.parse, urllib.request

GUESSES = __GUESSES__
FILE_TOOLS = __FILE_TOOLS__
PROBES = ["answer.yml", "../answer.yml", "../../../answer.yml", "/answer.yml", "*/answer.yml", "%2e%2e/answer.yml"]
PROBES += [g + "/*/answer.yml" for g in GUESSES]

task = json.loads(sys.stdin.read())
got = {"files": {}, "pack_paths": [], "tools": [], "http": {}, "mcp": {}}


def read(path):
    try:
        with open(path, errors="replace") as f:
            got["files"][os.path.abspath(path)] = f.read(4096)
    except OSError:
        pass


# 1. Files relative to the cwd, and under any path sredrill handed over (argv, environment, the Task).
for pattern in ("answer.yml", "../answer.yml", "../../answer.yml", "*/answer.yml", "*/*/answer.yml",
                "scenario.yml", "*/scenario.yml", "alert.json", "*/alert.json", "pack.yml", "*.yml"):
    for path in glob.glob(pattern):
        read(path)
given = list(sys.argv) + list(os.environ.values()) + [json.dumps({k: v for k, v in task.items() if k != "tools"})]
for text in given:
    for word in text.replace(os.pathsep, " ").replace('"', " ").split():
        if os.path.isdir(word) and (glob.glob(word + "/*/answer.yml") or os.path.exists(word + "/answer.yml")):
            got["pack_paths"].append(word)
            for path in glob.glob(word + "/*/answer.yml") + glob.glob(word + "/answer.yml"):
                read(path)


# 2. The tools, with a path in every string argument (the required ones too), and unknown tools named like files.
def request(method, url, args=None):
    req = urllib.request.Request(url, method=method, data=None if args is None else json.dumps(args).encode(),
                                 headers={"Authorization": "Bearer " + os.environ["SREDRILL_RUN_TOKEN"],
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, resp.read().decode(errors="replace")
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")
    except (urllib.error.URLError, ValueError) as err:
        return 0, repr(err)


def kinds(schema):
    types = [schema.get("type")] + [s.get("type") for s in schema.get("anyOf", [])]
    return [k for t in types for k in (t if isinstance(t, list) else [t])]


tools_url = os.environ["SREDRILL_TOOLS_URL"]
for tool in task["tools"]:
    if tool["name"] == "submit_diagnosis":
        continue
    props = tool["input_schema"].get("properties", {})
    strings = [p for p, s in props.items() if "string" in kinds(s)]
    needed = [p for p in strings if "null" not in kinds(props[p])]  # strict schemas list every argument as required
    for prop in strings:
        for probe in PROBES:
            args = dict.fromkeys([*needed, prop], probe)
            status, body = request("POST", tools_url + "/tools/" + tool["name"], args)
            got["tools"].append([tool["name"], args, status, body])
for name in FILE_TOOLS:
    status, body = request("POST", tools_url + "/tools/" + urllib.parse.quote(name, safe=""), {"path": "answer.yml"})
    got["tools"].append([name, {"path": "answer.yml"}, status, body])

# 3 and 4 ask the server, not this scenario's tools: the first agent run of a `sredrill run` does them, alone.
try:
    os.close(os.open(os.path.join(os.environ["CAPTURE_DIR"], "server-probed"), os.O_CREAT | os.O_EXCL))
    probe_server = True
except FileExistsError:
    probe_server = False

# 3. The tool server's URL space: traversal, docs, other runs.
base = tools_url.rsplit("/runs/", 1)[0]
for url in [base + "/answer.yml", base + "/docs", base + "/openapi.json", base + "/runs", base + "/runs/",
            tools_url + "/answer.yml", tools_url + "/../answer.yml", tools_url + "/tools/../../answer.yml",
            tools_url + "/tools/..%2F..%2Fanswer.yml", tools_url + "/files/answer.yml", tools_url + "/scenario",
            base + "/static/../../answer.yml", base + "/api/runs", base + "/v1/traces"] * probe_server:
    got["http"][url] = request("GET", url)

# 4. MCP: resources and prompts (a server may expose files there), and reading answer.yml as a resource.
async def mcp():
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": "Bearer " + os.environ["SREDRILL_RUN_TOKEN"]}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http, \\
            streamable_http_client(os.environ["SREDRILL_MCP_URL"], http_client=http) as (r, w), \\
            ClientSession(r, w) as session:
        await session.initialize()
        asks = [("resources", session.list_resources), ("templates", session.list_resource_templates),
                ("prompts", session.list_prompts)]
        asks += [("read " + p, lambda p=p: session.read_resource("file://" + p))
                 for p in ("/answer.yml", *(g + "/answer.yml" for g in GUESSES))]
        for name, ask in asks:
            try:
                got["mcp"][name] = repr(await ask())
            except Exception as exc:
                got["mcp"][name] = "error: " + repr(exc)


if probe_server and os.environ.get("SREDRILL_MCP_URL"):
    import asyncio
    asyncio.run(mcp())

with open(os.path.join(os.environ["CAPTURE_DIR"], task["run_id"] + ".json"), "w") as f:
    json.dump({"got": got, "probes": PROBES}, f)
print(json.dumps({"kind": "diagnosis", "root_cause": "nothing conclusive", "failure_modes": ["unknown"],
                  "category": "unknown"}))
""".replace("__GUESSES__", json.dumps(GUESSES)).replace("__FILE_TOOLS__", json.dumps(FILE_TOOLS))  # fmt: skip


def without(text: str, probes: list[str]) -> str:
    """The text without the agent's own probes (an error may quote the argument it rejected, or its start)."""
    for probe in sorted(probes, key=len, reverse=True):
        text = text.replace(probe, "").replace(json.dumps(probe)[1:-1], "")
    return text


def test_an_agent_that_hunts_for_the_answer_key_gets_nothing_of_it(project: Project) -> None:
    capture = project.root / "capture"
    capture.mkdir()
    project.write("oracle.py", ORACLE)
    cli = project.run(
        "run", *ARGS, "--agent", f"cmd:{sys.executable} oracle.py", "--axis2", "--jobs", "2", "--json",
        "--isolation", "process", "--agent-env", "CAPTURE_DIR",  # it writes into the project (read-only sandboxed)
        env={"CAPTURE_DIR": str(capture)}, timeout=900,
    )  # fmt: skip
    assert cli.code in (0, 1), cli.stderr[-3000:]
    results = cli.report()["results"]
    assert [r["id"] for r in results if r["status"] == "errored"] == []
    by_run = {r["agent_run_id"]: r["id"] for r in results}
    captured = {by_run[p.stem]: json.loads(p.read_text()) for p in capture.glob("*.json")}
    ids = [s.qualified_id for p in PACKS.values() for s in p.scenarios]
    assert sorted(captured) == sorted(f"{i}#{axis}" for i in ids for axis in (1, 2))  # full, then selective
    leaks: list[str] = []
    for result_id, seen in sorted(captured.items()):
        pack_name, _, folder = result_id.split("#")[0].partition("/")
        pack = PACKS[pack_name]
        got: dict[str, Any] = seen["got"]
        # Nothing sredrill handed over names a pack, and nothing relative to the cwd is one.
        assert got["files"] == {} and got["pack_paths"] == [], f"{result_id}: {got['files'] or got['pack_paths']}"
        # The tools and the server answered (errors are fine) with nothing of the key.
        text = without(json.dumps([got["tools"], got["http"], got["mcp"]]), seen["probes"])
        needles = leak_needles(pack.scenario(folder), pack.vocabulary) | set(ANSWER_FIELDS)
        leaks += [f"{result_id}: {n!r}" for n in find_leaks(text, needles)]
        # Every probe reached a tool and was answered: a result (full ignores filters), a bad_arguments error, or
        # unknown_tool for the tools named like files.
        by_status = {
            status: {name for name, _, st, _ in got["tools"] if st == status} for _, _, status, _ in got["tools"]
        }
        assert set(by_status) <= {200, 400, 404}, f"{result_id}: {by_status}"
        assert by_status[404] == set(FILE_TOOLS)
        assert {"list_pods", "get_events", "get_pod_logs", "search_logs"} <= by_status.get(200, set()) | by_status[400]
        if result_id.endswith("#2"):  # selective filters for real: a namespace, pod or node named like a file
            assert {"list_pods", "get_pod_logs", "get_node_health"} <= by_status[400], f"{result_id}: {by_status}"
    assert not leaks, "the agent reached the answer:\n" + "\n".join(leaks)
    # The server was probed once a run: no route but the run's own tools answers, and MCP serves no resource.
    (server,) = [seen["got"] for seen in captured.values() if seen["got"]["http"]]
    assert {url.rsplit("/", 1)[-1]: status for url, (status, _) in server["http"].items()}["traces"] == 405
    assert {status for status, _ in server["http"].values()} <= {404, 405}, server["http"]
    assert set(server["mcp"]) >= {"resources", "templates", "prompts", "read /answer.yml"}
    assert all(v.startswith("error: ") or "resources=[]" in v or "prompts=[]" in v for v in server["mcp"].values())
