-- The profile a call came through (the gateway's /mcp/<profile>, or
-- serve --stdio --profile); '' for the whole aggregate.
ALTER TABLE calls ADD COLUMN profile TEXT NOT NULL DEFAULT '';
