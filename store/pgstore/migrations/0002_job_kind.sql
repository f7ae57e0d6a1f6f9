-- Jobs have a kind: 'webhook' (a request to the endpoint endpoint_id) or
-- 'mail' (an email; endpoint_id NULL). Every mail job of the previous
-- schema is a row without an endpoint.
ALTER TABLE deliveries ADD COLUMN kind text COLLATE "C" NOT NULL DEFAULT 'webhook';
UPDATE deliveries SET kind = 'mail' WHERE endpoint_id IS NULL;
ALTER TABLE deliveries ALTER COLUMN kind DROP DEFAULT;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_kind
    CHECK (kind IN ('webhook', 'mail') AND (kind = 'mail') = (endpoint_id IS NULL));
-- MailJobs: a workspace's mail jobs in id order.
CREATE INDEX deliveries_mail ON deliveries (workspace, id) WHERE kind = 'mail';
