-- Roles and groups: their records, the members of groups, the roles of
-- groups, and the holders of each role, directly or through a group, with
-- the counts behind the totals of GroupMembers and RoleHolders. See
-- pgstore's package documentation ("Roles and groups") and access.go.

-- The records. name_fold is store.Fold(name), computed in Go, unique per
-- workspace; a prefix search is a range scan of its index, as for users.
CREATE TABLE roles (
    workspace   text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    id          bigint NOT NULL,
    name        text NOT NULL,
    name_fold   text COLLATE "C" NOT NULL,
    description text NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    version     bigint NOT NULL,
    PRIMARY KEY (workspace, id)
);
CREATE UNIQUE INDEX roles_name_fold ON roles (workspace, name_fold);

CREATE TABLE groups (
    workspace   text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    id          bigint NOT NULL,
    name        text NOT NULL,
    name_fold   text COLLATE "C" NOT NULL,
    description text NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    version     bigint NOT NULL,
    PRIMARY KEY (workspace, id)
);
CREATE UNIQUE INDEX groups_name_fold ON groups (workspace, name_fold);

-- Memberships, indexed both ways: the members of a group in id order
-- (the primary key), the groups of a user (group_members_user, which
-- also serves the foreign key's cascade). Like user_roles, a membership
-- names an existing user: the user's row goes, and so do its
-- memberships (DeleteUser deletes them itself first, to keep the counts).
CREATE TABLE group_members (
    workspace text COLLATE "C" NOT NULL,
    group_id  bigint NOT NULL,
    user_id   bigint NOT NULL,
    PRIMARY KEY (workspace, group_id, user_id),
    FOREIGN KEY (workspace, user_id) REFERENCES users ON DELETE CASCADE
);
CREATE INDEX group_members_user ON group_members (workspace, user_id, group_id);

-- The roles a group carries; group_roles_role finds the groups of a role
-- for DeleteRole.
CREATE TABLE group_roles (
    workspace text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    group_id  bigint NOT NULL,
    role_id   bigint NOT NULL,
    PRIMARY KEY (workspace, group_id, role_id)
);
CREATE INDEX group_roles_role ON group_roles (workspace, role_id, group_id);

-- The holders of each role: one row per role and user that holds it,
-- whose refs counts the reasons, 1 for a direct assignment (user_roles)
-- plus one for each of the user's groups that carries the role. A row
-- goes when its last reason goes. It is derived data, kept in step by
-- the statements that change its reasons, like an index: it has no
-- foreign key (a check per row would double the cost of giving a group
-- of a million members a role), and DeleteWorkspace deletes its rows.
CREATE TABLE role_holders (
    workspace text COLLATE "C" NOT NULL,
    role_id   bigint NOT NULL,
    user_id   bigint NOT NULL,
    refs      bigint NOT NULL CHECK (refs > 0),
    PRIMARY KEY (workspace, role_id, user_id)
);

-- The totals: the rows of role_holders of each role, and of group_members
-- of each group, kept by the same statements. Each total is the sum of up
-- to 16 rows, its shards: a write transaction adds what it changes to one
-- shard, which the Store picks in turn, so that transactions that follow
-- one another (a group commits while the next one runs) or run side by
-- side in two processes seldom update the same row, which under
-- SERIALIZABLE fails one of them. A shard may be negative (its
-- transactions removed more than they added); the sum never is. The rows
-- stay until their role or group is deleted.
CREATE TABLE role_counts (
    workspace text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    role_id   bigint NOT NULL,
    shard     smallint NOT NULL,
    n         bigint NOT NULL,
    PRIMARY KEY (workspace, role_id, shard)
);
CREATE TABLE group_counts (
    workspace text COLLATE "C" NOT NULL REFERENCES workspaces ON DELETE CASCADE,
    group_id  bigint NOT NULL,
    shard     smallint NOT NULL,
    n         bigint NOT NULL,
    PRIMARY KEY (workspace, group_id, shard)
);

-- The claims of the user's access that an OAuth client's tokens always
-- carry; none for the clients of an older schema.
ALTER TABLE oauth_clients ADD COLUMN claims text[] NOT NULL DEFAULT '{}';

-- The upgrade. Before roles were records, a role was any id assigned to a
-- user: each one assigned in a workspace becomes a role record named
-- "role-" and its id, created now (timestamptz holds microseconds, in
-- UTC), at version 1; the workspace's roles sequence goes past the
-- largest, so that no id is handed out again; and the direct assignments
-- become the holders and their counts.
INSERT INTO roles (workspace, id, name, name_fold, description, created_at, updated_at, version)
SELECT workspace, role_id, 'role-' || role_id, 'role-' || role_id, '', now(), now(), 1
FROM (SELECT DISTINCT workspace, role_id FROM user_roles) AS assigned;

INSERT INTO sequences AS s (workspace, name, value)
SELECT workspace, 'roles', max(role_id) FROM user_roles GROUP BY workspace
ON CONFLICT (workspace, name) DO UPDATE SET value = greatest(s.value, excluded.value);

INSERT INTO role_holders (workspace, role_id, user_id, refs)
SELECT workspace, role_id, user_id, 1 FROM user_roles;

INSERT INTO role_counts (workspace, role_id, shard, n)
SELECT workspace, role_id, 0, count(*) FROM user_roles GROUP BY workspace, role_id;
