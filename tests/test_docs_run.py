"""Docs that run: every fenced block of README.md and docs/*.md is run here, or says why it cannot be.

How a block is treated, by its fence's info string and the HTML comment on the line before it:

- `bash`, `sh`, `shell`, `console`: each command line runs in bash (a `\\` continues it; `$ ` is dropped);
  it must exit 0, or 1 ("some tests failed": a result, DESIGN §8). A line ending in `&` keeps running until
  the document's last block ran; `sredrill serve` is started, probed on `/health` and stopped. A line whose
  comment says `not runnable here: REASON` is skipped.
- `python`: an eval file (a block with an `@test`-style decorator) is written to the path its first line
  names (`# evals/checkout_eval.py`) and run by the command of its `<!-- run: COMMAND -->` marker, which
  must exit 0: the example passes as written. Any other block runs as a script (top-level `await` allowed).
- `json` and `yaml` blocks must parse; a block with no info string (or `text`) is output, and must not
  hold commands.
- `<!-- not runnable: REASON -->` skips a block (the reason is required); `<!-- output -->` marks output.

Blocks of one document run in order, in one temporary folder (holding `examples/` and a copy of `evals/`),
with `.venv/bin` first on PATH and the store in that folder (`SREDRILL_DB`). Fixed ports the docs name
(7860, 8000, 8001) are swapped for free ones, the same in every line of a document: the machine is shared.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
VENV_BIN = Path(sys.executable).parent
FIXED_PORTS = ("7860", "8000", "8001")
COMMAND_TIMEOUT_S = 180.0
START_TIMEOUT_S = 30.0

_FENCE = re.compile(r"^(?P<indent>\s*)```(?P<info>[^`\s]*)\s*$")
_MARKER = re.compile(r"^\s*<!--\s*(?P<text>.*?)\s*-->\s*$")
_SKIP = re.compile(r"^not runnable:\s*(?P<reason>.*)$")
_RUN = re.compile(r"^run:\s*(?P<command>.+)$")
_LINE_SKIP = re.compile(r"#\s*not runnable here:\s*(?P<reason>.*)$")
# What a command line looks like, to catch commands hidden in an output block.
_LOOKS_LIKE_COMMAND = re.compile(
    r"^\s*(\$ )?(sredrill|make|curl|python3?|uv|pip|cd|apt-get|docker|git|SREDRILL_\w+=|\S*/bin/\S+)(\s|$)"
)
_EVAL_DECORATOR = re.compile(r"^@\w+\(", re.MULTILINE)
_SHELLS = {"bash", "sh", "shell", "console"}
_OUTPUTS = {"", "text"}
# Runs a snippet as a script that may `await` at top level, as the docs' REPL-style snippets do.
_SNIPPET_RUNNER = (
    "import ast, asyncio, sys\n"
    "path = sys.argv[1]\n"
    "code = compile(open(path).read(), path, 'exec', flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)\n"
    "result = eval(code, {'__name__': '__main__'})\n"
    "if asyncio.iscoroutine(result):\n"
    "    asyncio.run(result)\n"
)


class Kind(StrEnum):
    SHELL = "shell"
    EVAL = "eval"
    SNIPPET = "snippet"
    JSON = "json"
    YAML = "yaml"
    OUTPUT = "output"
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
class Block:
    doc: Path
    line: int
    info: str
    marker: str | None
    text: str

    @property
    def where(self) -> str:
        doc = self.doc.relative_to(ROOT) if self.doc.is_relative_to(ROOT) else self.doc
        return f"{doc}:{self.line}"


def blocks_of(doc: Path) -> list[Block]:
    """Every fenced block of a Markdown file, with the HTML comment right before it (if any)."""
    lines = doc.read_text().splitlines()
    out = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        start, indent = i, len(fence["indent"])
        body = []
        i += 1
        while i < len(lines) and not re.match(r"^\s*```\s*$", lines[i]):
            # A fence indented under a list item: its lines carry the same indent.
            body.append(lines[i][indent:] if not lines[i][:indent].strip() else lines[i].lstrip())
            i += 1
        assert i < len(lines), f"{doc}:{start + 1}: a fence that is never closed"
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        marker = _MARKER.match(lines[j]) if j >= 0 else None
        out.append(Block(doc, start + 1, fence["info"], marker["text"] if marker else None, "\n".join(body)))
        i += 1
    return out


def kind_of(block: Block) -> tuple[Kind, str]:
    """How the block is treated, and the detail (the skip reason, the run command); AssertionError when the
    block is neither runnable nor marked."""
    marker = block.marker or ""
    skip = _SKIP.match(marker)
    if skip:
        assert len(skip["reason"].split()) >= 3, f"{block.where}: 'not runnable:' needs a reason (a few words)"
        return Kind.SKIPPED, skip["reason"]
    if marker.startswith("output"):
        return Kind.OUTPUT, ""
    if block.info in _OUTPUTS:
        commands = [ln for ln in block.text.splitlines() if _LOOKS_LIKE_COMMAND.match(ln)]
        assert not commands, (
            f"{block.where}: an untagged block holds commands ({commands[0].strip()!r}): tag it ```bash to run it, "
            "or mark it <!-- not runnable: REASON -->"
        )
        return Kind.OUTPUT, ""
    if block.info in _SHELLS:
        return Kind.SHELL, ""
    if block.info == "json":
        return Kind.JSON, ""
    if block.info == "yaml":
        return Kind.YAML, ""
    if block.info == "python":
        if _EVAL_DECORATOR.search(block.text):
            run = _RUN.match(marker)
            assert run, (
                f"{block.where}: an eval file needs <!-- run: sredrill test FILE --agent SPEC --> before it "
                "(the agent it passes with), or <!-- not runnable: REASON -->"
            )
            return Kind.EVAL, run["command"]
        return Kind.SNIPPET, ""
    raise AssertionError(f"{block.where}: unknown fence info {block.info!r}: use bash, python, json, yaml or text")


def commands_of(text: str) -> list[str]:
    """The command lines of a shell block: continuations joined, prompts and comment-only lines dropped."""
    out: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.removeprefix("$ ") if not pending else raw
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        line = pending + line
        pending = ""
        if line.strip() and not line.strip().startswith("#"):
            out.append(line.strip())
    return out


def strip_comment(line: str) -> str:
    """The command without its trailing `# comment` (a `#` outside quotes, after a space)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip()
    return line.rstrip()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Workspace:
    """One document's folder, environment, ports and background processes."""

    cwd: Path
    env: dict[str, str]
    ports: dict[str, str]
    background: list[subprocess.Popen[str]] = field(default_factory=list)

    def swap_ports(self, text: str) -> str:
        for fixed, free in self.ports.items():
            text = re.sub(rf"(?<=[:\s]){fixed}\b", free, text)
        return text

    def run(self, command: str, where: str, *, allowed: tuple[int, ...] = (0, 1)) -> None:
        command = self.swap_ports(command)
        if command.endswith("&"):
            self.start(command[:-1].strip(), where)
            return
        if re.match(r"^sredrill serve\b", command):
            self.serve(command, where)
            return
        done = subprocess.run(
            ["bash", "-c", command], cwd=self.cwd, env=self.env, capture_output=True, text=True,
            timeout=COMMAND_TIMEOUT_S,
        )  # fmt: skip
        assert done.returncode in allowed, (
            f"{where}: `{command}` exited {done.returncode} (expected {' or '.join(map(str, allowed))})\n"
            f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
        )
        assert "Traceback (most recent call last)" not in done.stderr, f"{where}: `{command}`:\n{done.stderr}"

    def start(self, command: str, where: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            ["bash", "-c", f"exec {command}"], cwd=self.cwd, env=self.env, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        self.background.append(proc)
        port = re.search(r"--port\s+(\d+)", command)
        if port and port[1] != "0":
            _wait_until(lambda: _accepts(int(port[1])), proc, f"{where}: `{command}` never listened on {port[1]}")
        return proc

    def serve(self, command: str, where: str) -> None:
        if "--port" not in command:
            command += f" --port {_free_port()}"
        port = re.search(r"--port\s+(\d+)", command)
        assert port is not None
        if port[1] == "0":
            command = command.replace("--port 0", f"--port {_free_port()}")
            port = re.search(r"--port\s+(\d+)", command)
            assert port is not None
        proc = self.start(command, where)
        try:
            status = _get(f"http://127.0.0.1:{port[1]}/health")
            assert status == 200, f"{where}: `{command}`: GET /health answered {status}"
        finally:
            _stop(proc)
            self.background.remove(proc)

    def close(self) -> None:
        for proc in self.background:
            _stop(proc)


def _accepts(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _wait_until(ready: object, proc: subprocess.Popen[str], message: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not ready():  # type: ignore[operator]
        if proc.poll() is not None:
            raise AssertionError(f"{message}: it exited {proc.returncode}\n{proc.stderr.read() if proc.stderr else ''}")
        assert time.monotonic() < deadline, message
        time.sleep(0.05)


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    shutil.copytree(ROOT / "evals", tmp_path / "evals", ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SREDRILL_", "OPENAI_", "VIRTUAL_ENV"))}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    env["SREDRILL_DB"] = str(tmp_path / ".sredrill" / "sredrill.db")
    used: set[str] = set()
    ports = {}
    for fixed in FIXED_PORTS:
        port = str(_free_port())
        while port in used:
            port = str(_free_port())
        used.add(port)
        ports[fixed] = port
    ws = Workspace(tmp_path, env, ports)
    yield ws
    ws.close()


def run_block(block: Block, ws: Workspace) -> str | None:
    """Run one block; the skip reason when it is not run."""
    kind, detail = kind_of(block)
    if kind in (Kind.SKIPPED, Kind.OUTPUT):
        return detail or "output"
    if kind is Kind.JSON:
        json.loads(block.text)
    elif kind is Kind.YAML:
        yaml.safe_load(block.text)
    elif kind is Kind.SHELL:
        for command in commands_of(block.text):
            skip = _LINE_SKIP.search(command)
            if skip:
                assert len(skip["reason"].split()) >= 3, f"{block.where}: `{command}` needs a reason"
                continue
            ws.run(strip_comment(command), block.where)
    elif kind is Kind.EVAL:
        first = block.text.splitlines()[0]
        name = first.lstrip("# ").strip() if first.startswith("#") else f"doc_{block.line}_eval.py"
        path = ws.cwd / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(block.text + "\n")
        ws.run(detail, block.where, allowed=(0,))
    elif kind is Kind.SNIPPET:
        path = ws.cwd / f"snippet_{block.doc.stem}_{block.line}.py"
        path.write_text(ws.swap_ports(block.text) + "\n")
        runner = ws.cwd / "_run_snippet.py"
        runner.write_text(_SNIPPET_RUNNER)
        ws.run(f"python {runner.name} {path.name}", block.where, allowed=(0,))
    return None


def test_every_block_is_runnable_or_says_why_not() -> None:
    problems = []
    for doc in DOCS:
        for block in blocks_of(doc):
            try:
                kind_of(block)
            except AssertionError as exc:
                problems.append(str(exc))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_the_blocks_of_a_document_run(doc: Path, workspace: Workspace) -> None:
    for block in blocks_of(doc):
        run_block(block, workspace)


# The checker itself, on small documents: it must fail where a reader would be misled.


def _doc(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "doc.md"
    path.write_text(text)
    return path


def test_a_skip_without_reason_an_untagged_command_and_an_eval_without_run_fail(tmp_path: Path) -> None:
    bad = {
        "<!-- not runnable: -->\n```bash\nsredrill run\n```\n": "needs a reason",
        "```\nsredrill run --pack rds_postgres\n```\n": "untagged block holds commands",
        "```python\nfrom sredrill import test\n@test('x')\nasync def _(agent): ...\n```\n": "an eval file needs",
        "```rust\nfn main() {}\n```\n": "unknown fence info",
    }
    for text, says in bad.items():
        (block,) = blocks_of(_doc(tmp_path, text))
        with pytest.raises(AssertionError, match=says):
            kind_of(block)


def test_a_failing_command_or_snippet_fails_the_document(tmp_path: Path, workspace: Workspace) -> None:
    for text in (
        "```bash\nsredrill run --pack no_such_pack\n```\n",
        "```python\nimport sredrill\nsredrill.no_such_name\n```\n",
        '```json\n{"a": 1,}\n```\n',
    ):
        (block,) = blocks_of(_doc(tmp_path, text))
        with pytest.raises((AssertionError, ValueError)):
            run_block(block, workspace)


def test_shell_lines_join_continuations_and_drop_prompts() -> None:
    assert commands_of("$ sredrill run \\\n    --axis2   # both axes\n# a comment\n\nsredrill runs list") == [
        "sredrill run      --axis2   # both axes",
        "sredrill runs list",
    ]


def test_comments_are_stripped_outside_quotes() -> None:
    assert strip_comment("sredrill serve   # the UI") == "sredrill serve"
    assert strip_comment('curl -d \'{"a": "#1"}\' x#y  # post') == 'curl -d \'{"a": "#1"}\' x#y'


def test_fixed_ports_are_swapped_for_free_ones(workspace: Workspace) -> None:
    swapped = workspace.swap_ports("curl localhost:7860/health; serve --port 8001 # 78601")
    assert "7860/" not in swapped and "--port 8001" not in swapped and "78601" in swapped


def test_the_snippet_runner_allows_top_level_await(workspace: Workspace) -> None:
    block = Block(ROOT / "README.md", 1, "python", None, "import asyncio\nawait asyncio.sleep(0)\nassert True")
    assert run_block(block, workspace) is None
