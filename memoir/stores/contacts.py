"""Contacts: one row per (user, email address), found by name for entity resolution."""

from __future__ import annotations

import builtins
import hashlib
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from memoir.db import Pool
from memoir.stores._common import user_must_exist

WORD_SIMILARITY_MIN = 0.6  # pg_trgm word_similarity(query, name): a typo of a name


class Contact(BaseModel):
    """One contact row."""

    contact_id: str
    user_id: str
    name: str
    email: str
    phone: str = ""
    source: str = "manual"
    created_at: datetime

    @property
    def label(self) -> str:
        """'Name <email>', as a recipient and as a disambiguation option."""
        return f"{self.name} <{self.email}>"


class NewContact(BaseModel):
    """A contact to add: what an importer reads from one card or row."""

    name: str
    email: str
    phone: str = ""


def contact_id_for(user_id: str, email: str) -> str:
    """The contact id of a user's address: `con_` + 16 hex of sha256(user, lowercased email)."""
    digest = hashlib.sha256(f"{user_id}\n{email.lower()}".encode()).hexdigest()[:16]
    return f"con_{digest}"


def _words(query: str) -> list[str]:
    return list(dict.fromkeys(w for w in re.findall(r"\w+", query.lower()) if w))


_COLUMNS = "contact_id, user_id, name, email, phone, source, created_at"
_UPSERT = (
    "INSERT INTO contacts (contact_id, user_id, name, email, phone, source)"
    " VALUES (%(cid)s, %(u)s, %(name)s, %(email)s, %(phone)s, %(source)s)"
    " ON CONFLICT (user_id, email) DO UPDATE SET name = EXCLUDED.name,"
    " phone = CASE WHEN EXCLUDED.phone = '' THEN contacts.phone ELSE EXCLUDED.phone END,"
    " source = EXCLUDED.source"
    f" RETURNING {_COLUMNS}"
)


def _params(user_id: str, contact: NewContact, source: str) -> dict[str, Any]:
    name, email = contact.name.strip(), contact.email.strip().lower()
    if not name:
        raise ValueError("a contact needs a name")
    if not email:
        raise ValueError(f"contact {name!r} needs an email address")
    return {
        "cid": contact_id_for(user_id, email),
        "u": user_id,
        "name": name,
        "email": email,
        "phone": contact.phone.strip(),
        "source": source,
    }


class ContactStore:
    """A user's contacts."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool

    async def add(
        self, user_id: str, name: str, email: str, *, phone: str = "", source: str = "manual"
    ) -> Contact:
        """Add a contact, or update the name and phone of the one with this address (upsert)."""
        [contact] = await self.add_many(
            user_id, [NewContact(name=name, email=email, phone=phone)], source=source
        )
        return contact

    async def add_many(
        self, user_id: str, contacts: Iterable[NewContact], *, source: str = "manual"
    ) -> builtins.list[Contact]:
        """Upsert every contact in one transaction: all of them or none."""
        params = [_params(user_id, c, source) for c in contacts]
        stored: builtins.list[Contact] = []
        async with (
            self.pool.connection() as conn,
            user_must_exist(user_id),
            conn.transaction(),
        ):
            for p in params:
                cur = await conn.execute(_UPSERT, p)
                row = await cur.fetchone()
                assert row is not None
                stored.append(Contact.model_validate(row))
        return stored

    async def list(self, user_id: str) -> builtins.list[Contact]:
        """The user's contacts by name."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                f"SELECT {_COLUMNS} FROM contacts WHERE user_id = %(u)s"
                " ORDER BY lower(name), email",
                {"u": user_id},
            )
            rows = await cur.fetchall()
        return [Contact.model_validate(r) for r in rows]

    async def get(self, user_id: str, contact_id: str) -> Contact | None:
        """One of the user's contacts, or None."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                f"SELECT {_COLUMNS} FROM contacts WHERE user_id = %(u)s AND contact_id = %(c)s",
                {"u": user_id, "c": contact_id},
            )
            row = await cur.fetchone()
        return Contact.model_validate(row) if row else None

    async def find(self, user_id: str, query: str) -> builtins.list[Contact]:
        """The user's contacts whose name matches `query`, best first.

        A contact matches when the query is its address, or when every word of the query starts a
        word of its name ("Dan" finds "Dan Smith" and "Daniel Ortiz", not "Jordan"). Only when
        nothing matches so does a name close to the query count (pg_trgm word similarity >= 0.6:
        typos such as "Alise Martin").
        """
        words = _words(query)
        if not words:
            return []
        patterns = [rf"\m{re.escape(w)}" for w in words]
        async with self.pool.connection() as conn:
            cur = await conn.execute(
                f"SELECT {_COLUMNS}, prefix OR exact_email AS exact FROM ("
                f" SELECT {_COLUMNS},"
                "  (SELECT bool_and(name ~* p) FROM unnest(%(p)s::text[]) AS p) AS prefix,"
                "  lower(email) = lower(%(q)s) AS exact_email,"
                "  word_similarity(%(q)s, name) AS word_sim"
                " FROM contacts WHERE user_id = %(u)s"
                ") AS c WHERE prefix OR exact_email OR word_sim >= %(min)s"
                " ORDER BY exact_email DESC, prefix DESC, word_sim DESC, lower(name), email",
                {"u": user_id, "q": query.strip(), "p": patterns, "min": WORD_SIMILARITY_MIN},
            )
            rows = await cur.fetchall()
        exact = [r for r in rows if r["exact"]]
        return [Contact.model_validate(r) for r in exact or rows]
