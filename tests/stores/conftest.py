"""Fixtures for store tests: a fresh user per test."""

from __future__ import annotations

import pytest

from memoir.models import UserProfile
from memoir.stores import Stores


@pytest.fixture
async def user(stores: Stores) -> UserProfile:
    """A new user of its own, so tests never see each other's rows."""
    profile, _token = await stores.users.create_user("Test User")
    return profile


@pytest.fixture
async def other_user(stores: Stores) -> UserProfile:
    """A second user, for checks that one user never sees another's rows."""
    profile, _token = await stores.users.create_user("Other User")
    return profile
