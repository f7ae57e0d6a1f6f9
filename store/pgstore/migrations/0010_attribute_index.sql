-- Users by attribute value: UsersByAttribute finds the users with one
-- value of an attribute key through this index, in id order, and counts
-- them along it, instead of reading every attribute of the workspace.
--
-- It holds a SHA-256 of the value rather than the value: a value of 1024
-- characters may take 4 KiB, more than a B-tree entry can hold (about
-- 2.7 kB, a third of a page). The query compares the value itself as
-- well, so that a match stays exact byte for byte.
CREATE INDEX user_attributes_value ON user_attributes (workspace, key, sha256(value), user_id);
