"""The bubblewrap sandbox an agent runs in: the bwrap argv that wraps its command (DESIGN §11.3).

Inside: its own PID, IPC and UTS namespaces (and network, unless `--agent-network host`); the system, the
interpreter and the agent's code read-only; a fresh writable working directory and an empty HOME (the user's ~
holds keys and `~/.sredrill`); the grader's paths (packs, store, eval dirs, `~/.sredrill`, and any scenario
folder copied under the agent's code dir) masked: an empty tmpfs over a directory, /dev/null over a file; so are
the repositories holding them (their history has them).

The masked paths themselves show (as mount points in /proc/self/mountinfo, in bwrap's argv as pid 1), never
their content.

Examples:
    >>> Sandbox(policy).command(["python", "examples/agents/x.py"], workdir=Path("/tmp/agent-1"))
    ['/usr/bin/bwrap', '--unshare-pid', …, '--chdir', '/tmp/agent-1', 'python', '/work/examples/agents/x.py']
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from sredrill.isolation.levels import BWRAP_INSTALL_HINT, AgentNetwork, IsolationPolicy, IsolationUnavailable

__all__ = ["Sandbox", "ToolsBridge"]

_SYSTEM_DIRS: Final = ("/usr", "/etc", "/opt")
# Merged-/usr systems have these as symlinks into /usr; older ones as directories.
_SYSTEM_LINKS: Final = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_RESOLV_CONF: Final = Path("/etc/resolv.conf")
_SQLITE_COMPANIONS: Final = ("-wal", "-shm", "-journal")
# `.git` may be a file (a worktree or submodule pointing at its repository): it is masked as a file.
_VCS_DIRS: Final = (".git", ".hg", ".jj", ".svn")
_ANSWER_FILE: Final = "answer.yml"
_UNSCANNED_DIRS: Final = frozenset({"node_modules", "__pycache__", "site-packages", "dist-packages"})
_SCAN_LIMIT: Final = 20_000
"""Folders of the code directory looked at for stray answer keys, at most."""
# `python -m sredrill.isolation.forward`, run as a script (its imports are the standard library's only).
_FORWARD_SCRIPT: Final = Path(__file__).resolve().with_name("forward.py")


@dataclass(frozen=True, slots=True)
class ToolsBridge:
    """Where the run's tool server listens on a Unix socket, and the loopback port agents are told about.

    Inside a sandbox without network, `sredrill.isolation.forward` listens on 127.0.0.1:`port` and forwards to
    `socket`, so `SREDRILL_TOOLS_URL` is the same URL inside as outside.
    """

    socket: Path
    """The tool server's AF_UNIX socket; its directory is bound into the sandbox."""
    port: int
    """The loopback port named by the agent's `SREDRILL_TOOLS_URL` / `SREDRILL_MCP_URL`."""


@dataclass(frozen=True, slots=True)
class _Bind:
    source: Path
    """The real path (symlinks resolved): masks are matched against it."""
    dest: Path
    """Where it appears inside the sandbox."""


class Sandbox:
    """Builds bwrap command lines for one run's policy."""

    def __init__(self, policy: IsolationPolicy) -> None:
        self.policy = policy

    def command(self, argv: Sequence[str], *, workdir: Path, tools: ToolsBridge | None = None) -> list[str]:
        """The bwrap argv that runs `argv` sandboxed.

        Args:
            argv: the agent's command; relative paths in it that exist under the launch dir are made absolute.
            workdir: an existing, empty directory: the agent's writable working directory, at its own path.
            tools: the tool server's Unix socket and port: with network none a forwarder inside serves
                127.0.0.1:port; ignored with host network (the agent reaches the port itself).

        Returns:
            The full argv, bwrap first.

        Raises:
            IsolationUnavailable: bwrap is not installed, `workdir` does not exist, or a masked directory holds
                the agent's code.
        """
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise IsolationUnavailable(f"bwrap is not installed: {BWRAP_INSTALL_HINT}")
        if not workdir.is_dir():
            raise IsolationUnavailable(
                f"the sandbox's working directory {workdir} does not exist", hint="create it before the run"
            )
        policy = self.policy
        out = [bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent"]
        if policy.network is AgentNetwork.NONE:
            out.append("--unshare-net")
        # Capabilities stay dropped even when sredrill runs as root: with them an agent could unmount a mask.
        out += ["--cap-drop", "ALL", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        for link in _SYSTEM_LINKS:
            path = Path(link)
            if path.is_symlink():
                out += ["--symlink", os.readlink(path), link]
            elif path.is_dir():
                out += ["--ro-bind", link, link]

        ro = self._read_only_trees()
        self._check_code_visible(policy.code_dir())
        # Parents before children: a bind inside HOME (a pyenv, the code dir) must land on the fresh home.
        mounts = [(home, ["--tmpfs", str(home)])] if (home := _fresh_home()) is not None else []
        mounts += [(bind.dest, ["--ro-bind", str(bind.source), str(bind.dest)]) for bind in ro]
        for _, args in sorted(mounts, key=lambda mount: len(mount[0].parts)):
            out += args
        work = _Bind(workdir.resolve(), workdir.absolute())
        out += ["--bind", str(work.source), str(work.dest)]
        binds = [*ro, work]
        # With host network the agent reaches the tool server's TCP port itself; the forwarder could not bind it.
        if policy.network is not AgentNetwork.NONE:
            tools = None
        if tools is not None:
            sock = _Bind(tools.socket.parent.resolve(), tools.socket.parent.absolute())
            out += ["--ro-bind", str(sock.source), str(sock.dest)]
            binds.append(sock)
        command = self._absolute_argv(argv)
        for extra in _outside(command, binds, self.policy.masked):
            out += ["--ro-bind", str(extra), str(extra)]
            binds.append(_Bind(extra, extra))
        out += self._masks(binds)
        out += ["--chdir", str(work.dest)]
        if tools is not None:
            # By path, isolated and without site: the forwarder needs only the standard library, and this
            # skips importing sredrill and site-packages' .pth files (about 12 ms of each sandboxed start).
            command = [
                sys.executable, "-I", "-S", str(_FORWARD_SCRIPT),
                "--port", str(tools.port), "--socket", str(tools.socket.absolute()), "--", *command,
            ]  # fmt: skip
        return [*out, *command]

    def _read_only_trees(self) -> list[_Bind]:
        policy = self.policy
        paths: list[Path] = [Path(p) for p in _SYSTEM_DIRS]
        if policy.network is AgentNetwork.HOST and _RESOLV_CONF.is_symlink():
            # Often a link into /run (systemd-resolved), which is not bound: DNS would fail with host network.
            paths.append(_RESOLV_CONF.resolve())
        paths += [Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)]
        paths += [Path(p) for p in sys.path if p]
        paths.append(policy.code_dir())
        paths += _linked_trees(policy)
        # A tree inside a masked dir (an eval dir on sys.path) is not bound: a mask covers what lies under a
        # bind, not a bind of its own inside.
        hidden = [m for m in policy.masked if m.is_dir()]
        return _outermost(p for p in paths if p.exists() and not any(p.resolve().is_relative_to(m) for m in hidden))

    def _check_code_visible(self, code: Path) -> None:
        real = code.resolve()
        for masked in self.policy.masked:
            if masked.is_dir() and real.is_relative_to(masked):
                raise IsolationUnavailable(
                    f"the agent's code directory {code} is inside a path the agent must not see ({masked})",
                    field="--agent-dir",
                    hint="run from another directory, or pass --agent-dir DIR outside the packs, evals and store",
                )

    def _masks(self, binds: Sequence[_Bind]) -> list[str]:
        targets: dict[Path, bool] = {}
        for real in self._existing_masks(binds):
            for bind in binds:
                if real.is_relative_to(bind.source):
                    targets.setdefault(bind.dest / real.relative_to(bind.source), real.is_dir())
        out: list[str] = []
        # Parents first: a file masked inside a masked folder then reads empty there, as anywhere else.
        for target, is_dir in sorted(targets.items(), key=lambda item: len(item[0].parts)):
            if is_dir:
                out += ["--tmpfs", str(target)]
            else:
                # A device bind: bwrap mounts plain binds nodev, where /dev/null cannot even be opened.
                # Writes to it are discarded, so it needs no read-only flag.
                out += ["--dev-bind", "/dev/null", str(target)]
        return out

    def _existing_masks(self, binds: Sequence[_Bind]) -> list[Path]:
        masked = [Path(os.path.abspath(m)) for m in self.policy.masked]
        # What a folder may hold to be masked whole: masked paths, and the SQLite companions of each.
        hidden = {Path(os.path.realpath(f"{m}{s}")) for m in masked for s in ("", *_SQLITE_COMPANIONS)}
        keep = [b.source for b in binds] + [self.policy.code_dir().resolve()]
        out: list[Path] = []
        for path in masked:
            found: list[Path] = []
            if not path.is_dir() and (folder := _dedicated_folder(path, hidden, keep)) is not None:
                # bwrap's binds are live views, and a file mask covers only a file that exists when the sandbox
                # starts: a store's -wal/-shm made later, or the store itself, would show. Its folder's tmpfs
                # hides whatever the driver makes there later.
                found.append(folder)
            if path.exists():
                found.append(path.resolve())
                if path.is_file():
                    # An SQLite store's companions hold its latest writes (the WAL) until a checkpoint.
                    found += [c.resolve() for c in (Path(f"{path}{s}") for s in _SQLITE_COMPANIONS) if c.exists()]
            # Nothing to hide when `found` is empty (bwrap could not create a mount point in a read-only tree).
            out += found
            # A repository holding a masked path holds its history too (`git show HEAD:packs/…/answer.yml`).
            out += [d / vcs for real in found[:1] for d in real.parents for vcs in _VCS_DIRS if (d / vcs).exists()]
        for folder in _answer_folders(self.policy):
            out.append(folder)
            out += [d / vcs for d in folder.parents for vcs in _VCS_DIRS if (d / vcs).exists()]
        return list(dict.fromkeys(out))

    def _absolute_argv(self, argv: Sequence[str]) -> list[str]:
        # The agent starts in its fresh workdir, not the launch dir: paths the user wrote relative to where they
        # ran sredrill must still name the same files.
        launch = self.policy.launch_dir
        out: list[str] = []
        for i, arg in enumerate(argv):
            # A bare program name is looked up on PATH, never in the working directory: leave it.
            is_path = i > 0 or "/" in arg
            if is_path and arg and not os.path.isabs(arg) and (launch / arg).exists():
                # Its real path: a link out of the launch dir (`examples -> ../shared/examples`) would dangle
                # inside, where only what the agent needs is bound (`_outside` binds the real folder).
                out.append(os.path.realpath(launch / arg))
            else:
                out.append(arg)
        return out


# Cached per policy (one run's): a `cmd:` agent's sandbox starts once per test, the walk once per run.
@functools.lru_cache(maxsize=16)
def _answer_folders(policy: IsolationPolicy) -> tuple[Path, ...]:
    """Scenario folders (an `answer.yml` inside) under the agent's code directory and the launch directory (bound
    too: it is on `sys.path`) that no mask covers: a copy of a pack there, or one an eval file loads by path,
    holds answer keys the run's masks do not name.

    Bounded: hidden folders, virtual environments and vendored trees are not entered, and the walk stops after
    `_SCAN_LIMIT` folders (a code directory that large is named with `--agent-dir`).
    """
    masked = {m.resolve() for m in policy.masked}
    keep = {policy.code_dir().resolve(), policy.launch_dir.resolve()}  # where the agent runs: never masked
    roots = sorted(keep | set(_linked_trees(policy)), key=lambda r: len(r.parts))
    roots = [r for i, r in enumerate(roots) if not any(r.is_relative_to(o) for o in roots[:i])]
    out: list[Path] = []
    seen = 0
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            here = Path(dirpath)
            seen += 1
            if seen > _SCAN_LIMIT:
                return tuple(out)
            if here in masked or "pyvenv.cfg" in filenames:
                dirnames.clear()
            elif _ANSWER_FILE in filenames and here not in keep:
                out.append(here)
                dirnames.clear()
            else:
                dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in _UNSCANNED_DIRS]
    return tuple(out)


@functools.lru_cache(maxsize=16)
def _linked_trees(policy: IsolationPolicy) -> tuple[Path, ...]:
    """The real folders that links at the top of the code and launch directories point to
    (`examples -> ../shared/examples`): bound read-only at their real path, so `py:examples.…` imports inside as
    outside. A link to a folder holding the launch or code directory (`up -> ..`) binds nothing."""
    homes = {policy.code_dir().resolve(), policy.launch_dir.resolve()}
    out: list[Path] = []
    for home in sorted(homes):
        try:
            entries = list(home.iterdir())
        except OSError:
            continue
        for entry in sorted(entries):
            try:
                if not entry.is_symlink() or not entry.is_dir():
                    continue
                real = entry.resolve()
            except OSError:
                continue
            if any(h.is_relative_to(real) or real.is_relative_to(h) for h in homes) or real in out:
                continue
            out.append(real)
    return tuple(out)


def _outside(argv: Sequence[str], binds: Sequence[_Bind], masked: Sequence[Path]) -> list[Path]:
    """The real folders of files the command names that no bind shows (a script reached through a symlink that
    leaves the code dir), unless masked: bound read-only at their real path, so the link resolves inside."""
    hidden = [m.resolve() for m in masked if m.exists()]
    out: list[Path] = []
    for arg in argv:
        if not os.path.isabs(arg) or not os.path.isfile(arg):
            continue
        folder = Path(os.path.realpath(arg)).parent
        if any(folder.is_relative_to(b.source) for b in binds) or any(folder.is_relative_to(m) for m in hidden):
            continue
        if folder not in out:
            out.append(folder)
    return out


def _dedicated_folder(path: Path, hidden: set[Path], keep: Sequence[Path]) -> Path | None:
    """The real folder of a masked file (existing or not) when it holds only masked paths and their SQLite
    companions (`results/` of `--db results/x.db`), else None: a folder holding or being a tree the sandbox
    binds (the code dir, `sys.path`, the workdir) is never one."""
    folder = Path(os.path.realpath(path.parent))
    if not folder.is_dir() or any(k.is_relative_to(folder) for k in keep):
        return None
    try:
        entries = [folder / name for name in os.listdir(folder)]
    except OSError:
        return None  # unreadable here: the file masks stay, as for any folder that holds more
    return folder if all(e in hidden for e in entries) else None


def _fresh_home() -> Path | None:
    """HOME, to be an empty writable tmpfs (tools write caches there; the user's ~ holds keys and ~/.sredrill),
    or None when HOME is unset, relative, or holds the system dirs."""
    home = os.environ.get("HOME", "")
    if not os.path.isabs(home):
        return None
    path = Path(os.path.abspath(home))
    if path == Path("/") or any(Path(d).is_relative_to(path) for d in _SYSTEM_DIRS):
        return None
    return path


def _outermost(paths: Iterable[Path]) -> list[_Bind]:
    """One bind per tree, parents before children; a path inside an already bound tree adds nothing."""
    binds: dict[Path, _Bind] = {}
    for path in paths:
        dest = Path(os.path.abspath(path))
        binds.setdefault(dest, _Bind(path.resolve(), dest))
    ordered = sorted(binds.values(), key=lambda b: len(b.dest.parts))
    kept: list[_Bind] = []
    for bind in ordered:
        if not any(bind.dest.is_relative_to(k.dest) and bind.source.is_relative_to(k.source) for k in kept):
            kept.append(bind)
    return kept
