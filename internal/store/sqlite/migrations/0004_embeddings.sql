-- The embedding vectors of tool definitions, by model and definition
-- hash: computed once, kept across restarts. A vector is opaque bytes.
CREATE TABLE embeddings (
	model    TEXT    NOT NULL,
	hash     TEXT    NOT NULL,
	vector   BLOB    NOT NULL,
	saved_at INTEGER NOT NULL,
	PRIMARY KEY (model, hash)
) STRICT;
