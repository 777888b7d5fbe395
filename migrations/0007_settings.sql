-- A person's own settings: the name pages greet them by (their account name when empty) and
-- the time zone times are shown in (the browser's when empty). Theme and notifications are
-- settings of a browser, kept there.
ALTER TABLE users ADD COLUMN display_name TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN time_zone TEXT NOT NULL DEFAULT '';
