-- The open windows of the call quota, one per key (a client). A window
-- that has closed carries no state, so TakeQuota deletes it; the index
-- makes that a range delete.
CREATE TABLE quotas (
	key          TEXT    NOT NULL PRIMARY KEY,
	window_start INTEGER NOT NULL,
	calls        INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

CREATE INDEX quotas_by_start ON quotas (window_start);
