-- The pending jobs of one workspace (WorkspaceQueue): how many there are
-- and when the first is due, read from an index by workspace and due time
-- over the pending jobs alone, beside deliveries_due (every workspace's
-- pending jobs by due time, which the dispatcher reads). The count walks
-- the workspace's entries of this index, never its finished jobs.
CREATE INDEX deliveries_workspace_due ON deliveries (workspace, due_at) WHERE status = 'pending';
