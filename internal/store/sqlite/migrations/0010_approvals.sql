-- Tool calls held for a person's approval, bound to one call by key (the
-- caller, the flow, the tool and the arguments' hash). Times are Unix
-- nanoseconds; 0 is "not yet".
CREATE TABLE approvals (
	id          TEXT    NOT NULL PRIMARY KEY,
	key         TEXT    NOT NULL,
	tool        TEXT    NOT NULL,
	server      TEXT    NOT NULL,
	caller      TEXT    NOT NULL,
	flow        TEXT    NOT NULL,
	client_name TEXT    NOT NULL,
	profile     TEXT    NOT NULL,
	args_hash   TEXT    NOT NULL,
	args        BLOB    NOT NULL,
	reason      TEXT    NOT NULL,
	detail      TEXT    NOT NULL,
	state       TEXT    NOT NULL,
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,
	decided_by  TEXT    NOT NULL DEFAULT '',
	decided_at  INTEGER NOT NULL DEFAULT 0,
	used_at     INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX approvals_key ON approvals (key, created_at);
-- One call waits on one hold, whichever process held it first.
CREATE UNIQUE INDEX approvals_pending ON approvals (key) WHERE state = 'pending';
CREATE INDEX approvals_state ON approvals (state, created_at);
CREATE INDEX approvals_expires ON approvals (expires_at);

-- The data-flow labels each flow's results have carried, with the tool
-- that carried each: one row per flow, label and tool, from the first time.
CREATE TABLE flow_marks (
	flow  TEXT    NOT NULL,
	label TEXT    NOT NULL,
	tool  TEXT    NOT NULL,
	time  INTEGER NOT NULL,
	PRIMARY KEY (flow, label, tool)
) STRICT;
CREATE INDEX flow_marks_time ON flow_marks (time);

-- A person-in-the-loop decision on a call: held, approved by whom and
-- when, denied, expired, refused by the data-flow rule.
ALTER TABLE calls ADD COLUMN approval TEXT NOT NULL DEFAULT '';
