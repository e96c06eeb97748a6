-- Memoir: a message record's embedding stays in its row (bench/README.md, "Message records").
-- A vector(384) takes 1,540 bytes. With an assistant reply's text and its tsvector a row passes
-- Postgres' 2 kB TOAST threshold, and pgvector's default EXTERNAL storage then moves the vector,
-- the largest value, out of line: an exact dense scan of one user's 10,000 records fetched 44%
-- of the vectors from the TOAST table. PLAIN keeps the vector in the row (the text and tsvector
-- are compressed or moved out instead; a row still fits a page). Rows written before this keep
-- their layout until rewritten (VACUUM FULL message_records).
ALTER TABLE message_records ALTER COLUMN embedding SET STORAGE PLAIN;
ALTER TABLE message_records ALTER COLUMN tsv SET STORAGE MAIN;
