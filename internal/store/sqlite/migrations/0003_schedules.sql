-- The start-up schedule of a server that failed to start: kept so that a
-- server in backoff (or left out) is not dialled again by every run before
-- its next attempt is due. One row per server, replaced on save, deleted
-- when the server connects.
CREATE TABLE schedules (
	server      TEXT    NOT NULL PRIMARY KEY,
	fingerprint TEXT    NOT NULL,
	state       TEXT    NOT NULL,
	reason      TEXT    NOT NULL,
	attempts    INTEGER NOT NULL,
	probes      INTEGER NOT NULL,
	next        INTEGER NOT NULL,
	last_error  TEXT    NOT NULL,
	saved_at    INTEGER NOT NULL
) STRICT;
