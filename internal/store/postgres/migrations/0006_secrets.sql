-- Named secrets shared by every process using the store (the key that
-- signs the gateway's request states): made once, by whichever process
-- asks first, and never changed. created_at is Unix nanoseconds.
CREATE TABLE secrets (
	name       TEXT COLLATE "C" NOT NULL PRIMARY KEY,
	value      BYTEA  NOT NULL,
	created_at BIGINT NOT NULL
);
