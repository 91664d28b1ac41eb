-- The embedding vectors of tool definitions, by model and definition
-- hash: computed once, kept across restarts. A vector is opaque bytes;
-- times are Unix nanoseconds.
CREATE TABLE embeddings (
	model    TEXT COLLATE "C" NOT NULL,
	hash     TEXT COLLATE "C" NOT NULL,
	vector   BYTEA  NOT NULL,
	saved_at BIGINT NOT NULL,
	PRIMARY KEY (model, hash)
);
