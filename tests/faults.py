"""A database fault for the worker's stores: one store method refuses, as a Postgres that is down
would, until the test clears it. Everything else is the real store."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import psycopg

from memoir.stores import Stores

REFUSED = "connection refused: is the database down?"


class RefusingStore:
    """Delegates to `inner`; `method` raises `psycopg.OperationalError` while `failing` is set."""

    def __init__(self, inner: Any, method: str) -> None:
        self._inner = inner
        self._method = method
        self.failing = True
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name != self._method:
            return value

        async def refusing(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.failing:
                raise psycopg.OperationalError(REFUSED)
            return await value(*args, **kwargs)

        return refusing


def refusing(store: str, method: str, faults: list[RefusingStore]) -> Callable[[Stores], Stores]:
    """A `wrap_stores` for the harness: `stores.<store>.<method>` refuses; the fault goes in
    `faults` so the test can watch and clear it."""

    def wrap(stores: Stores) -> Stores:
        fault = RefusingStore(getattr(stores, store), method)
        faults.append(fault)
        return dataclasses.replace(stores, **{store: fault})

    return wrap
