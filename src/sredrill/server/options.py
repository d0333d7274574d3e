"""What `sredrill serve` was started with (`ServerOptions`), for the app and the runs API it mounts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from sredrill.server.live import DEFAULT_MAX_RUNS

if TYPE_CHECKING:
    from sredrill.engine.prices import Prices
    from sredrill.harness.context import JudgeConfig

__all__ = ["DEFAULT_IDLE_TIMEOUT_S", "DEFAULT_MAX_SESSIONS", "ServerOptions"]

DEFAULT_MAX_SESSIONS: Final = 64
DEFAULT_IDLE_TIMEOUT_S: Final = 300.0


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """What a server was started with; kept on `app.state.options`.

    `evals` is the folder the runs API may run eval files from.
    """

    max_sessions: int = DEFAULT_MAX_SESSIONS
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S
    token: str | None = None
    loopback_only: bool = True
    packs: tuple[str, ...] | None = None
    evals: str | None = None
    allow_agents: tuple[str, ...] = ()
    """`--allow-agent` patterns: agent specs beyond the built-in ones the runs API may start."""
    runs_token: str | None = field(default=None, repr=False)
    """The token of the runs API and web UI: `token`, or one generated at start on a loopback server; None
    beyond loopback without `token` (those routes are closed)."""
    max_runs: int = DEFAULT_MAX_RUNS
    """Runs of the runs API going on at once; one more answers 429 with `Retry-After`."""
    judge: JudgeConfig | None = field(default=None, repr=False)
    """The judge of the eval runs the runs API starts, unless a request names its own (`serve --judge-*`); its
    API key goes only to its own `base_url`. None: a request's judge settings only."""
    prices: Prices | None = field(default=None, repr=False)
    """What tokens cost (`serve --prices FILE`): the runs started here are priced as they run, and every stored
    run the API and UI show is priced by it (as `runs show --prices` prices one). None: costs as stored."""
