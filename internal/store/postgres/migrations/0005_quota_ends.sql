-- Each quota window keeps when it closes under its own length, so that a
-- sweep forgets only closed windows, whatever the length of the quota the
-- sweeping caller counts under (processes sharing the store may be
-- configured apart). Windows opened before this have none, and are swept
-- as before: once closed under the caller's length.
ALTER TABLE quotas ADD COLUMN window_end BIGINT;

CREATE INDEX quotas_by_end ON quotas (window_end);
