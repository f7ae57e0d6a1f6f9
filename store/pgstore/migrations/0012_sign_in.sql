-- What a sign-in leaves for later, and the assets of workspaces. A
-- session keeps the client that started it (its User-Agent and address,
-- as the identity package bounded them) and how the user authenticated
-- (amr: RFC 8176 values, in the order given), which the session's
-- authorization requests and grants carry on so that a refreshed ID token
-- keeps them; an authorization request keeps its ui_locales for the
-- hosted pages; a refresh token names the token its exchange issued, for
-- the reuse interval. See pgstore's package documentation ("Schema").
--
-- Each new column defaults to the empty value, so that the rows of an
-- older schema read back as records without it: no client known, no
-- sign-in methods, no locales, no successor. A constant default is kept
-- in the catalog, not written into each row, so no ALTER rewrites its
-- table. Ids are text COLLATE "C", as elsewhere.
ALTER TABLE sessions
    ADD COLUMN user_agent text NOT NULL DEFAULT '',
    ADD COLUMN address    text NOT NULL DEFAULT '',
    ADD COLUMN amr        text[] NOT NULL DEFAULT '{}';
ALTER TABLE auth_requests
    ADD COLUMN ui_locales text NOT NULL DEFAULT '',
    ADD COLUMN amr        text[] NOT NULL DEFAULT '{}';
ALTER TABLE grants ADD COLUMN amr text[] NOT NULL DEFAULT '{}';
ALTER TABLE refresh_tokens ADD COLUMN successor_id text COLLATE "C" NOT NULL DEFAULT '';

-- Assets: files a workspace serves, such as its logo, under a name the
-- identity package chooses ("logo", "client/<client id>/logo"). data is
-- the bytes as given (some KiB, which PostgreSQL keeps out of line once
-- a row passes 2 KiB), content_type their media type. They go with their
-- workspace.
CREATE TABLE assets (
    workspace    text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    name         text COLLATE "C" NOT NULL,
    content_type text NOT NULL,
    data         bytea NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (workspace, name)
);
