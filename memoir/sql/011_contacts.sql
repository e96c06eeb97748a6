-- Memoir: a user's contacts, behind `contacts.lookup` and the entity resolution of `email.send`
-- ("email Dan" → Dan's address). Imported from vCard or CSV (`memoir contacts import`).
-- Deleting the user deletes its contacts (ON DELETE CASCADE).

CREATE TABLE contacts (
    contact_id text PRIMARY KEY,
    user_id    text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    name       text NOT NULL,
    email      text NOT NULL,
    phone      text NOT NULL DEFAULT '',
    source     text NOT NULL DEFAULT 'manual',
    created_at timestamptz NOT NULL DEFAULT now(),
    -- One contact per address: importing the same address again updates its name and phone.
    UNIQUE (user_id, email)
);
CREATE INDEX contacts_name_trgm_idx ON contacts USING gin (name gin_trgm_ops);
