-- The initial schema, the same tables as SQLite's. Times are Unix
-- nanoseconds (BIGINT: timestamptz keeps only microseconds) and durations
-- nanoseconds. Names are compared byte by byte (COLLATE "C"), as SQLite
-- does, so every store sorts them alike whatever the database's locale.

-- One catalogue per server, replaced wholesale on save.
CREATE TABLE catalogs (
	server      TEXT COLLATE "C" NOT NULL PRIMARY KEY,
	fingerprint TEXT   NOT NULL,
	data        BYTEA  NOT NULL,
	saved_at    BIGINT NOT NULL
);

-- Approved definitions; tool '' is the server's instructions.
CREATE TABLE pins (
	server      TEXT COLLATE "C" NOT NULL,
	tool        TEXT COLLATE "C" NOT NULL,
	hash        TEXT   NOT NULL,
	definition  BYTEA  NOT NULL,
	approved_at BIGINT NOT NULL,
	PRIMARY KEY (server, tool)
);

-- Changed definitions awaiting approval, at most one per tool.
CREATE TABLE drifts (
	server     TEXT COLLATE "C" NOT NULL,
	tool       TEXT COLLATE "C" NOT NULL,
	hash       TEXT   NOT NULL,
	definition BYTEA  NOT NULL,
	seen_at    BIGINT NOT NULL,
	PRIMARY KEY (server, tool)
);

-- The audit log of every process sharing the database. IDs come from one
-- sequence, so they are never reused and grow in the order rows are
-- inserted; retention by count relies on that.
CREATE TABLE calls (
	id        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	time      BIGINT  NOT NULL,
	tool      TEXT COLLATE "C" NOT NULL,
	server    TEXT COLLATE "C" NOT NULL,
	caller    TEXT    NOT NULL,
	arg_shape TEXT    NOT NULL,
	outcome   TEXT    NOT NULL,
	code      TEXT    NOT NULL,
	latency   BIGINT  NOT NULL,
	bytes_in  BIGINT  NOT NULL,
	bytes_out BIGINT  NOT NULL
);

-- Each index ends in time so that every filter the store offers reads
-- newest-first off an index, and retention by age is a range delete.
CREATE INDEX calls_by_time   ON calls (time, id);
CREATE INDEX calls_by_server ON calls (server, time, id);
CREATE INDEX calls_by_tool   ON calls (tool, time, id);

CREATE TABLE scores (
	server     TEXT COLLATE "C" NOT NULL PRIMARY KEY,
	value      DOUBLE PRECISION NOT NULL,
	updated_at BIGINT NOT NULL
);

-- The open windows of the call quota, one per key (a client), shared by
-- every process so that a quota holds across them. A closed window
-- carries no state and is swept.
CREATE TABLE quotas (
	key          TEXT COLLATE "C" NOT NULL PRIMARY KEY,
	window_start BIGINT  NOT NULL,
	calls        INTEGER NOT NULL
);

CREATE INDEX quotas_by_start ON quotas (window_start);
