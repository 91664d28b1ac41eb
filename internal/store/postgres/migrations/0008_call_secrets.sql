-- The credentials found in a call's arguments and result and what was done
-- with each ("direction:rule:action", comma-separated); never their values.
ALTER TABLE calls ADD COLUMN secrets TEXT COLLATE "C" NOT NULL DEFAULT '';
