"""Knowledge-base fixtures: a fresh user, the store, the bundled embedder, a small handbook."""

from pathlib import Path

import pytest

from memoir.embeddings import Embedder, get_local_embedder
from memoir.knowledge import KnowledgeStore
from memoir.models import UserProfile
from memoir.stores import Stores

HANDBOOK = """# Acme Handbook

## Refunds

Customers can ask for a refund within 30 days of purchase. Refunds go back to the original
payment method within 5 business days.

## Holidays

Every employee gets 25 days of paid holiday per year. Unused days do not carry over.

## Security

Badges must be worn at all times inside the office.
"""


@pytest.fixture
def embedder() -> Embedder:
    return get_local_embedder()


@pytest.fixture
def kb(stores: Stores) -> KnowledgeStore:
    return KnowledgeStore(stores.pool)


@pytest.fixture
async def user(stores: Stores) -> UserProfile:
    profile, _ = await stores.users.create_user("Kim")
    return profile


@pytest.fixture
def handbook(tmp_path: Path) -> Path:
    path = tmp_path / "handbook.md"
    path.write_text(HANDBOOK, encoding="utf-8")
    return path
