-- The name the calling client gave itself (clientInfo.name), as it
-- declared it: recorded beside the caller as it authenticated, never a key.
ALTER TABLE calls ADD COLUMN client_name TEXT NOT NULL DEFAULT '';
