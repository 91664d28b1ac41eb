-- The initial schema. Times are Unix nanoseconds; durations nanoseconds.
-- Tables are STRICT so a wrongly typed bind fails loudly instead of being
-- stored as whatever affinity makes of it.

-- One catalogue per server, replaced wholesale on save.
CREATE TABLE catalogs (
	server      TEXT    NOT NULL PRIMARY KEY,
	fingerprint TEXT    NOT NULL,
	data        BLOB    NOT NULL,
	saved_at    INTEGER NOT NULL
) STRICT;

-- Approved definitions; tool '' is the server's instructions.
CREATE TABLE pins (
	server      TEXT    NOT NULL,
	tool        TEXT    NOT NULL,
	hash        TEXT    NOT NULL,
	definition  BLOB    NOT NULL,
	approved_at INTEGER NOT NULL,
	PRIMARY KEY (server, tool)
) STRICT, WITHOUT ROWID;

-- Changed definitions awaiting approval, at most one per tool.
CREATE TABLE drifts (
	server     TEXT    NOT NULL,
	tool       TEXT    NOT NULL,
	hash       TEXT    NOT NULL,
	definition BLOB    NOT NULL,
	seen_at    INTEGER NOT NULL,
	PRIMARY KEY (server, tool)
) STRICT, WITHOUT ROWID;

-- The audit log. AUTOINCREMENT so an ID is never reused, even after
-- retention has deleted every row: readers may remember IDs, and retention
-- by count relies on IDs only growing.
CREATE TABLE calls (
	id        INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
	time      INTEGER NOT NULL,
	tool      TEXT    NOT NULL,
	server    TEXT    NOT NULL,
	caller    TEXT    NOT NULL,
	arg_shape TEXT    NOT NULL,
	outcome   TEXT    NOT NULL,
	code      TEXT    NOT NULL,
	latency   INTEGER NOT NULL,
	bytes_in  INTEGER NOT NULL,
	bytes_out INTEGER NOT NULL
) STRICT;

-- Each index ends in time (and implicitly id) so that every filter the
-- store offers reads newest-first straight off an index, and retention by
-- age is a range delete.
CREATE INDEX calls_by_time   ON calls (time);
CREATE INDEX calls_by_server ON calls (server, time);
CREATE INDEX calls_by_tool   ON calls (tool, time);

CREATE TABLE scores (
	server     TEXT    NOT NULL PRIMARY KEY,
	value      REAL    NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;
