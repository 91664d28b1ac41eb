-- The start-up schedule of a server that failed to start: kept so that a
-- server in backoff (or left out) is not dialled again by every run before
-- its next attempt is due. One row per server, replaced on save, deleted
-- when the server connects. Times are Unix nanoseconds.
CREATE TABLE schedules (
	server      TEXT COLLATE "C" NOT NULL PRIMARY KEY,
	fingerprint TEXT   NOT NULL,
	state       TEXT   NOT NULL,
	reason      TEXT   NOT NULL,
	attempts    BIGINT NOT NULL,
	probes      BIGINT NOT NULL,
	next        BIGINT NOT NULL,
	last_error  TEXT   NOT NULL,
	saved_at    BIGINT NOT NULL
);
