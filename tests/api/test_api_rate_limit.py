"""The per-token rate limit: a token bucket per API token, 429 with `Retry-After`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from temporalio.client import Client

from api.app import create_app
from api.deps import RateLimiter
from memoir.settings import Settings
from memoir.stores import Stores
from tests.api.support import ApiUser, assert_error, http_client


@pytest.fixture
async def limited(
    settings: Settings, temporal_client: Client, stores: Stores
) -> AsyncIterator[httpx.AsyncClient]:
    """The app with 3 requests at once per token, refilled at one a second."""
    tight = settings.model_copy(update={"rate_limit_per_minute": 60, "rate_limit_burst": 3})
    async with http_client(create_app(tight, client=temporal_client, stores=stores)) as http:
        yield http


async def test_over_the_burst_is_429_with_retry_after(
    limited: httpx.AsyncClient, user: ApiUser
) -> None:
    for _ in range(3):
        assert (await limited.get("/v1/me", headers=user.headers)).status_code == 200
    response = await limited.get("/v1/me", headers=user.headers)
    assert_error(response, 429, "too_many_requests")
    assert response.headers["Retry-After"] == "1"


async def test_each_token_has_its_own_bucket(
    limited: httpx.AsyncClient, user: ApiUser, other_user: ApiUser
) -> None:
    for _ in range(4):
        await limited.get("/v1/me", headers=user.headers)
    assert (await limited.get("/v1/me", headers=other_user.headers)).status_code == 200


async def test_healthz_is_never_limited(limited: httpx.AsyncClient, user: ApiUser) -> None:
    for _ in range(6):
        response = await limited.get("/healthz", headers=user.headers)
        assert response.status_code == 200, response.text


def test_the_bucket_refills_at_the_rate() -> None:
    limiter = RateLimiter(per_minute=30, burst=2)  # one request every 2 s
    assert [limiter.retry_after("t", now=100.0) for _ in range(2)] == [None, None]
    assert limiter.retry_after("t", now=100.0) == 2
    assert limiter.retry_after("t", now=101.0) == 1
    assert limiter.retry_after("t", now=102.1) is None


def test_zero_per_minute_means_no_limit() -> None:
    limiter = RateLimiter(per_minute=0, burst=1)
    assert all(limiter.retry_after("t", now=0.0) is None for _ in range(100))


def test_defaults_leave_room_for_the_benchmarks() -> None:
    settings = Settings()
    assert settings.rate_limit_per_minute >= 6000 and settings.rate_limit_burst >= 1000
