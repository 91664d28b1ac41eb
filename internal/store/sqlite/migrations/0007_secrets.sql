-- Named secrets shared by every process using the store (the key that
-- signs the gateway's request states): made once, by whichever process
-- asks first, and never changed.
CREATE TABLE secrets (
	name       TEXT    NOT NULL PRIMARY KEY,
	value      BLOB    NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;
