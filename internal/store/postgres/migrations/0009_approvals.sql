-- Tool calls held for a person's approval, bound to one call by key (the
-- caller, the flow, the tool and the arguments' hash). Times are Unix
-- nanoseconds; 0 is "not yet".
CREATE TABLE approvals (
	id          TEXT COLLATE "C" NOT NULL PRIMARY KEY,
	key         TEXT COLLATE "C" NOT NULL,
	tool        TEXT COLLATE "C" NOT NULL,
	server      TEXT COLLATE "C" NOT NULL,
	caller      TEXT COLLATE "C" NOT NULL,
	flow        TEXT COLLATE "C" NOT NULL,
	client_name TEXT COLLATE "C" NOT NULL,
	profile     TEXT COLLATE "C" NOT NULL,
	args_hash   TEXT COLLATE "C" NOT NULL,
	args        BYTEA  NOT NULL,
	reason      TEXT COLLATE "C" NOT NULL,
	detail      TEXT COLLATE "C" NOT NULL,
	state       TEXT COLLATE "C" NOT NULL,
	created_at  BIGINT NOT NULL,
	expires_at  BIGINT NOT NULL,
	decided_by  TEXT COLLATE "C" NOT NULL DEFAULT '',
	decided_at  BIGINT NOT NULL DEFAULT 0,
	used_at     BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX approvals_key ON approvals (key, created_at);
-- One call waits on one hold, whichever process held it first.
CREATE UNIQUE INDEX approvals_pending ON approvals (key) WHERE state = 'pending';
CREATE INDEX approvals_state ON approvals (state, created_at);
CREATE INDEX approvals_expires ON approvals (expires_at);

-- The data-flow labels each flow's results have carried, with the tool
-- that carried each: one row per flow, label and tool, from the first time.
CREATE TABLE flow_marks (
	flow  TEXT COLLATE "C" NOT NULL,
	label TEXT COLLATE "C" NOT NULL,
	tool  TEXT COLLATE "C" NOT NULL,
	time  BIGINT NOT NULL,
	PRIMARY KEY (flow, label, tool)
);
CREATE INDEX flow_marks_time ON flow_marks (time);

-- A person-in-the-loop decision on a call: held, approved by whom and
-- when, denied, expired, refused by the data-flow rule.
ALTER TABLE calls ADD COLUMN approval TEXT COLLATE "C" NOT NULL DEFAULT '';
