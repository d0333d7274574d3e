"""A typed client of the TRACE server over WebSocket, on openenv-core's `EnvClient`.

>>> from trace_env import TraceAction, TraceEnv
>>> with TraceEnv(base_url="http://127.0.0.1:7860").sync() as env:
...     result = env.reset(task_id="hard_mixed", seed=0)
...     result = env.step(TraceAction(action_type="inspect_logs", target="database"))
...     result.observation.inspection.logs[0].signal
<Signal.POOL_EXHAUSTED: 'pool_exhausted'>

`GenericEnvClient` (dicts in, dicts out) works as well; this one validates what it sends and receives.
"""

from typing import Any

from openenv.core import EnvClient
from openenv.core.client_types import StepResult

from .models import TraceAction, TraceObservation, TraceState

__all__ = ["TraceEnv"]


class TraceEnv(EnvClient[TraceAction, TraceObservation, TraceState]):
    """One session of the TRACE server per connection; `reset(task_id=…, seed=…)`, `step(action)`, `state()`."""

    def _step_payload(self, action: TraceAction) -> dict[str, Any]:
        return action.model_dump(mode="json", exclude_none=True)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[TraceObservation]:
        return StepResult(
            observation=TraceObservation.model_validate(payload["observation"]),
            reward=payload.get("reward"),
            done=bool(payload.get("done")),
        )

    def _parse_state(self, payload: dict[str, Any]) -> TraceState:
        return TraceState.model_validate(payload)
