-- The endpoints of an event type: WebhooksForEvent finds the endpoints
-- whose events hold a type through this index instead of reading every
-- endpoint of the workspace.
CREATE INDEX webhooks_events ON webhooks USING gin (events);
