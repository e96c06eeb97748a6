"""The API's dependencies are coroutines: FastAPI runs a plain `def` dependency in a worker
thread, a thread hand-off per dependency on every request."""

import inspect

from api import deps
from api.routes import codec


def test_dependencies_run_on_the_event_loop() -> None:
    for dependency in (
        deps.get_settings,
        deps.get_client,
        deps.get_stores,
        deps.current_user,
        deps.audit_trail,
        codec._codec,
        codec.codec_user,
    ):
        assert inspect.iscoroutinefunction(dependency), dependency.__name__
