-- A retried episodic capture must not count its turn twice: remember the last counted turn.
ALTER TABLE episodic_state ADD COLUMN IF NOT EXISTS last_turn_id text;
