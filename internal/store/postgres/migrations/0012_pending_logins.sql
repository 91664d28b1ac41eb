-- The logins that wait for a redirect to the gateway's public callback
-- URL, so that any process sharing the store can receive it. id is a hash
-- of the login's state; redirect is what the redirect carried, sealed by
-- Switchboard, NULL until it came. Times are Unix nanoseconds.
CREATE TABLE pending_logins (
	id         TEXT COLLATE "C" NOT NULL PRIMARY KEY,
	server     TEXT   NOT NULL,
	caller     TEXT   NOT NULL DEFAULT '',
	expires_at BIGINT NOT NULL,
	redirect   BYTEA
);
CREATE INDEX pending_logins_expires ON pending_logins (expires_at);
