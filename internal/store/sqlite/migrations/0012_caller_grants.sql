-- Each caller's own OAuth grants for the servers that use them, sealed
-- (encrypted) by Switchboard before they reach the store; subject is who
-- the upstream knows the caller as. lease_holder and lease_until mark the
-- one refresh of a grant in progress among the processes sharing the
-- store. Times are Unix nanoseconds.
CREATE TABLE caller_grants (
	caller       TEXT    NOT NULL,
	issuer       TEXT    NOT NULL,
	resource     TEXT    NOT NULL,
	client_id    TEXT    NOT NULL,
	sealed       BLOB    NOT NULL,
	subject      TEXT    NOT NULL DEFAULT '',
	saved_at     INTEGER NOT NULL,
	lease_holder TEXT    NOT NULL DEFAULT '',
	lease_until  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (caller, issuer, resource, client_id)
) STRICT;
CREATE INDEX caller_grants_resource ON caller_grants (resource, caller);

-- Who the upstream saw a call made by, for a server that uses each
-- caller's own grant, and the decision about that grant (own, exchanged,
-- needs_login, would_own, would_login); '' otherwise.
ALTER TABLE calls ADD COLUMN upstream_as TEXT NOT NULL DEFAULT '';
ALTER TABLE calls ADD COLUMN caller_grant TEXT NOT NULL DEFAULT '';
