"""TRACE's wire models, as sredrill defines them (`sredrill.env`).

>>> from trace_env.models import TraceAction
>>> TraceAction(action_type="scale_workers", target="api_workers", value=6)
Action(action_type='scale_workers', target='api_workers', value=6, args=None)
"""

from sredrill.env import Action as TraceAction
from sredrill.env import EnvState as TraceState
from sredrill.env import Observation as TraceObservation

__all__ = ["TraceAction", "TraceObservation", "TraceState"]
