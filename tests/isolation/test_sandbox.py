"""The sandbox, run for real under bubblewrap: what an agent inside can read, write, see and reach."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sredrill.isolation import (
    IsolationPolicy,
    IsolationUnavailable,
    Sandbox,
    ToolsBridge,
    resolve_isolation,
)
from tests.isolation import require_sandbox


@pytest.fixture(autouse=True)
def _sandbox_works() -> None:
    require_sandbox()


@pytest.fixture
def launch(tmp_path: Path) -> Path:
    """A launch dir holding an agent, a pack with its answer key, and a store file."""
    root = tmp_path / "project"
    (root / "examples" / "agents").mkdir(parents=True)
    (root / "examples" / "agents" / "hello.py").write_text("import sys\nprint('hello', *sys.argv[1:])\n")
    (root / "packs" / "001-lag").mkdir(parents=True)
    (root / "packs" / "001-lag" / "answer.yml").write_text("failure_modes: [replication_lag]\n")
    (root / ".sredrill").mkdir()
    (root / ".sredrill" / "sredrill.db").write_text("expected: replication_lag\n")
    (root / "notes.txt").write_text("readable\n")
    return root


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def policy_for(launch: Path, **kwargs: object) -> IsolationPolicy:
    masked = [launch / "packs", launch / ".sredrill" / "sredrill.db"]
    return resolve_isolation("sandbox", masked=masked, launch_dir=launch, **kwargs)  # type: ignore[arg-type]


def run_python(policy: IsolationPolicy, workdir: Path, code: str) -> subprocess.CompletedProcess[str]:
    argv = Sandbox(policy).command([sys.executable, "-c", textwrap.dedent(code)], workdir=workdir)
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)


def test_the_system_the_interpreter_and_the_code_dir_are_readable(launch: Path, workdir: Path) -> None:
    done = run_python(
        policy_for(launch),
        workdir,
        f"""
        import json, sqlite3, sredrill.isolation
        print(open("/etc/passwd").read().count(":") > 0, open({str(launch / "notes.txt")!r}).read().strip())
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "readable"]


def test_writes_succeed_only_in_the_workdir_and_tmp(launch: Path, workdir: Path, tmp_path: Path) -> None:
    (tmp_path / "host-secret.txt").write_text("the host's /tmp\n")
    done = run_python(
        policy_for(launch),
        workdir,
        f"""
        import os
        for path in [{str(launch / "new.txt")!r}, "/usr/new.txt", "/etc/new.txt", {str(tmp_path / "x")!r}]:
            try:
                open(path, "w").write("x")
                print("wrote", path)
            except OSError as exc:
                print("refused", type(exc).__name__)
        open("out.txt", "w").write("mine")
        open("/tmp/scratch", "w").write("scratch")
        print("cwd", os.getcwd(), os.path.exists({str(tmp_path / "host-secret.txt")!r}))
        """,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert all(line.startswith("refused") for line in lines[:3]), lines
    assert lines[3:] == [f"wrote {tmp_path / 'x'}", f"cwd {workdir} False"]  # /tmp is the sandbox's own
    assert (workdir / "out.txt").read_text() == "mine"
    assert not (launch / "new.txt").exists() and not (tmp_path / "x").exists()


def test_a_masked_dir_is_empty_and_a_masked_file_reads_empty(launch: Path, workdir: Path) -> None:
    done = run_python(
        policy_for(launch),
        workdir,
        f"""
        import os
        print(os.listdir({str(launch / "packs")!r}), repr(open({str(launch / ".sredrill" / "sredrill.db")!r}).read()))
        print(sorted(os.listdir({str(launch)!r})))
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[] ''", "['.sredrill', 'examples', 'notes.txt', 'packs']"]


def test_a_masked_store_hides_its_sqlite_companions_too(launch: Path, workdir: Path) -> None:
    store = launch / "runs.db"
    for name in ("runs.db", "runs.db-wal", "runs.db-shm"):
        (launch / name).write_text("expected: replication_lag\n")
    done = run_python(
        resolve_isolation("sandbox", masked=[store], launch_dir=launch),
        workdir,
        f"""
        import glob
        print([open(p).read() for p in sorted(glob.glob({str(launch / "runs.db*")!r}))])
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['', '', '']"


def test_the_repository_holding_a_masked_pack_is_masked_too(launch: Path, workdir: Path) -> None:
    git = ["git", "-C", str(launch), "-c", "user.name=t", "-c", "user.email=t@t"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "packs"]):
        subprocess.run([*git, *args], check=True, capture_output=True)
    done = run_python(
        policy_for(launch),
        workdir,
        f"""
        import os, subprocess
        show = ["git", "-C", {str(launch)!r}, "show", "HEAD:packs/001-lag/answer.yml"]
        print(os.listdir({str(launch / ".git")!r}), subprocess.run(show, capture_output=True).returncode)
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "128"]  # 128: git finds no repository


def test_masks_follow_a_tree_bound_through_a_symlink(
    launch: Path, workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # sys.path may name a tree through a link; the mask is given as the real path and must cover both.
    real = tmp_path / "real-lib"
    (real / "secret").mkdir(parents=True)
    (real / "secret" / "answer.yml").write_text("key\n")
    (real / "public.py").write_text("")
    (tmp_path / "lib").symlink_to(real)
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    done = run_python(
        resolve_isolation("sandbox", masked=[real / "secret"], launch_dir=launch),
        workdir,
        f"""
        import os
        print(sorted(os.listdir({str(tmp_path / "lib")!r})), os.listdir({str(tmp_path / "lib" / "secret")!r}))
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['public.py', 'secret'] []"


def test_a_tree_inside_a_masked_dir_is_not_bound(
    launch: Path, workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evals = tmp_path / "evals"
    (evals / "lib").mkdir(parents=True)
    (evals / "lib" / "expected.py").write_text("ANSWER = 'replication_lag'\n")
    monkeypatch.syspath_prepend(str(evals / "lib"))
    argv = Sandbox(resolve_isolation("sandbox", masked=[evals], launch_dir=launch)).command(["true"], workdir=workdir)
    assert str(evals / "lib") not in argv
    unmasked = Sandbox(policy_for(launch)).command(["true"], workdir=workdir)
    assert str(evals / "lib") in unmasked


def test_an_agent_sees_only_its_own_processes(launch: Path, workdir: Path) -> None:
    done = run_python(
        policy_for(launch),
        workdir,
        """
        import json, os
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        print(len(pids), os.getpid(), os.getppid())
        print(json.dumps(open(f"/proc/{os.getppid()}/cmdline", "rb").read().decode().split("\\0")))
        print(os.listdir("."))
        """,
    )
    assert done.returncode == 0, done.stderr
    counts, parent, listing = done.stdout.splitlines()
    count, pid, ppid = map(int, counts.split())
    assert count <= 3 and pid <= 3 and ppid <= 2, counts  # bwrap's init, the agent: not the host's processes
    assert json.loads(parent)[0].endswith("bwrap")  # bwrap's init, not the driver that holds the packs
    assert listing == "[]"  # a fresh working directory


def test_with_network_none_no_host_loopback_port_is_reachable(launch: Path, workdir: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # reachable from the host
        done = run_python(
            policy_for(launch),
            workdir,
            f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
                print("connected")
            except OSError as exc:
                print("unreachable", type(exc).__name__)
            """,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["unreachable", "ConnectionRefusedError"]


def test_relative_paths_in_argv_resolve_against_the_launch_dir(launch: Path, workdir: Path) -> None:
    (launch / "run.sh").write_text("#!/bin/sh\nexec python3 examples/agents/hello.py from-sh\n")
    (launch / "run.sh").chmod(0o755)
    policy = policy_for(launch)
    argv = Sandbox(policy).command([sys.executable, "examples/agents/hello.py", "--x", "no-such-file"], workdir=workdir)
    assert argv[-3:] == [str(launch / "examples" / "agents" / "hello.py"), "--x", "no-such-file"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, "hello --x no-such-file\n"), done.stderr
    # A script path as the program: made absolute; a bare name stays a PATH lookup.
    argv = Sandbox(policy).command(["./run.sh"], workdir=workdir)
    assert argv[-1] == str(launch / "run.sh")
    assert Sandbox(policy).command(["python3", "-V"], workdir=workdir)[-2:] == ["python3", "-V"]


def test_a_script_reached_through_a_symlink_out_of_the_code_dir_still_runs(
    launch: Path, workdir: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "shared" / "agents"
    elsewhere.mkdir(parents=True)
    (elsewhere / "linked.py").write_text("print('linked')\n")
    (launch / "linked").symlink_to(elsewhere)
    argv = Sandbox(policy_for(launch)).command([sys.executable, "linked/linked.py"], workdir=workdir)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, "linked\n"), done.stderr
    # Only the script's own folder is shown, read-only; the rest of where it lives is not.
    assert ["--ro-bind", str(elsewhere), str(elsewhere)] == argv[argv.index(str(elsewhere)) - 1 :][:3]
    assert str(tmp_path / "shared") not in argv


def test_the_agent_dir_is_the_code_dir(launch: Path, workdir: Path) -> None:
    agents = launch / "examples" / "agents"
    done = run_python(
        policy_for(launch, agent_dir=agents),
        workdir,
        f"""
        import os
        print(os.listdir({str(agents)!r}), os.path.exists({str(launch / "notes.txt")!r}))
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['hello.py']", "False"]


def test_home_is_fresh_and_writable_and_binds_inside_it_still_show(
    launch: Path, workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".sredrill").mkdir(parents=True)
    (home / ".sredrill" / "sredrill.db").write_text("expected\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("key\n")
    code = home / "project"
    launch.rename(code)
    monkeypatch.setenv("HOME", str(home))
    done = run_python(
        resolve_isolation("sandbox", launch_dir=code),
        workdir,
        f"""
        import os
        open(os.path.expanduser("~/.cache"), "w").write("cache")
        print(sorted(os.listdir({str(home)!r})), os.path.exists({str(code / "notes.txt")!r}))
        """,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['.cache',", "'project']", "True"]
    assert not (home / ".cache").exists()


def test_with_host_network_the_tools_bridge_is_not_used(launch: Path, workdir: Path) -> None:
    bridge = ToolsBridge(socket=launch / "tools.sock", port=8123)
    argv = Sandbox(policy_for(launch, network="host")).command(["python3", "agent.py"], workdir=workdir, tools=bridge)
    assert not any(a.endswith("forward.py") for a in argv) and "--unshare-net" not in argv
    argv = Sandbox(policy_for(launch)).command(["python3", "agent.py"], workdir=workdir, tools=bridge)
    assert any(a.endswith("isolation/forward.py") for a in argv) and "--unshare-net" in argv


def test_inside_a_sandbox_bwrap_cannot_start_and_auto_says_why(launch: Path, workdir: Path) -> None:
    # A place where bwrap is installed but may not create namespaces (as in many containers): a sandbox itself.
    done = run_python(
        policy_for(launch),
        workdir,
        """
        from sredrill.isolation import resolve_isolation, sandbox_problem
        print(sandbox_problem())
        print(resolve_isolation("auto").warning)
        """,
    )
    assert done.returncode == 0, done.stderr
    problem, warning = done.stdout.splitlines()
    assert problem.startswith("bwrap cannot create namespaces: bwrap: ")
    assert (
        warning
        == f"sandbox unavailable ({problem}); agents run at process level, where disk and /proc reads are not prevented"
    )


def test_an_inherited_fd_passes_through(launch: Path, workdir: Path) -> None:
    # A `py:` agent's worker talks to its driver over an inherited socketpair fd.
    read_end, write_end = os.pipe()
    try:
        argv = Sandbox(policy_for(launch)).command(
            [sys.executable, "-c", f"import os; os.write({write_end}, b'over the fd')"], workdir=workdir
        )
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False, pass_fds=(write_end,))
        assert done.returncode == 0, done.stderr
        assert os.read(read_end, 100) == b"over the fd"
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_code_dir_inside_a_masked_path_is_refused(launch: Path, workdir: Path) -> None:
    policy = resolve_isolation("sandbox", masked=[launch], launch_dir=launch / "examples")
    with pytest.raises(IsolationUnavailable, match="is inside a path the agent must not see") as e:
        Sandbox(policy).command(["true"], workdir=workdir)
    assert e.value.hint is not None and "--agent-dir" in e.value.hint


def test_a_missing_workdir_is_an_error(launch: Path, tmp_path: Path) -> None:
    with pytest.raises(IsolationUnavailable, match="does not exist"):
        Sandbox(policy_for(launch)).command(["true"], workdir=tmp_path / "gone")
