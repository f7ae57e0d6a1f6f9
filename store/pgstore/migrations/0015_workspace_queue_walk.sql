-- WorkspaceQueue reads the start of deliveries_due (every workspace's
-- pending jobs by due time, which the dispatcher reads), up to a limit,
-- instead of an index of its own: deliveries_workspace_due (migration
-- 0014) is no longer read, and every enqueue and every change of a job's
-- status stops paying for it.
DROP INDEX IF EXISTS deliveries_workspace_due;
