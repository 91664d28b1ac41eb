-- The run of the script (code mode) a call belongs to: on the script's
-- own row and on each call it made; '' for a call made directly.
ALTER TABLE calls ADD COLUMN run TEXT NOT NULL DEFAULT '';
