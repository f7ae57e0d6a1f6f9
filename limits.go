package identity

// Defaults and bounds of a workspace's Limits.
const (
	// DefaultAttributesPerUser is how many attributes a user may have when
	// Limits.AttributesPerUser is zero.
	DefaultAttributesPerUser = 100
	// MaxAttributesPerUser bounds Limits.AttributesPerUser.
	MaxAttributesPerUser = 10_000
	// DefaultWebhookEndpoints is how many webhook endpoints a workspace
	// may have when Limits.WebhookEndpoints is zero.
	DefaultWebhookEndpoints = 50
	// MaxWebhookEndpoints bounds Limits.WebhookEndpoints.
	MaxWebhookEndpoints = 1_000
	// DefaultRoles is how many roles a workspace may have when
	// Limits.Roles is zero.
	DefaultRoles = 1_000
	// MaxRoles bounds Limits.Roles.
	MaxRoles = 100_000
	// DefaultGroups is how many groups a workspace may have when
	// Limits.Groups is zero.
	DefaultGroups = 10_000
	// MaxGroups bounds Limits.Groups.
	MaxGroups = 1_000_000
	// DefaultGroupsPerUser is how many groups a user may be a member of
	// when Limits.GroupsPerUser is zero.
	DefaultGroupsPerUser = 100
	// MaxGroupsPerUser bounds Limits.GroupsPerUser.
	MaxGroupsPerUser = 1_000
	// DefaultRolesPerGroup is how many roles a group may carry when
	// Limits.RolesPerGroup is zero.
	DefaultRolesPerGroup = 50
	// MaxRolesPerGroup bounds Limits.RolesPerGroup.
	MaxRolesPerGroup = 1_000
	// DefaultClaimNames is how many names a token's groups or roles claim
	// may carry when Limits.ClaimNames is zero.
	DefaultClaimNames = 100
	// MaxClaimNames bounds Limits.ClaimNames.
	MaxClaimNames = 1_000
	// DefaultPasskeysPerUser is how many passkeys a user may have when
	// Limits.PasskeysPerUser is zero.
	DefaultPasskeysPerUser = 10
	// MaxPasskeysPerUser bounds Limits.PasskeysPerUser: every passkey's
	// id goes into the options of a username-first sign-in and of a
	// registration (excluded), which a browser must take.
	MaxPasskeysPerUser = 100
)

// Limits cap what a workspace holds, so that no user and no workspace
// grows without bound: a user's attributes are all read for every token
// and every GET of them, and every event is matched against the
// workspace's endpoints; a user's groups and their roles are read for
// every token that carries them. The zero value of a field is its
// default. A write that would pass a limit is CodeLimitReached, checked
// in the transaction that writes, so the limit holds under concurrency;
// lowering a limit removes nothing, it only refuses additions. A group's
// members are not limited.
type Limits struct {
	// AttributesPerUser is how many attributes one user may have: 1 to
	// MaxAttributesPerUser; 0 means DefaultAttributesPerUser (100).
	AttributesPerUser int `json:"attributesPerUser,omitempty"`
	// WebhookEndpoints is how many webhook endpoints the workspace may
	// have: 1 to MaxWebhookEndpoints; 0 means DefaultWebhookEndpoints
	// (50).
	WebhookEndpoints int `json:"webhookEndpoints,omitempty"`
	// Roles is how many roles the workspace may have: 1 to MaxRoles; 0
	// means DefaultRoles (1,000).
	Roles int `json:"roles,omitempty"`
	// Groups is how many groups the workspace may have: 1 to MaxGroups; 0
	// means DefaultGroups (10,000).
	Groups int `json:"groups,omitempty"`
	// GroupsPerUser is how many groups one user may be a member of: 1 to
	// MaxGroupsPerUser; 0 means DefaultGroupsPerUser (100).
	GroupsPerUser int `json:"groupsPerUser,omitempty"`
	// RolesPerGroup is how many roles one group may carry: 1 to
	// MaxRolesPerGroup; 0 means DefaultRolesPerGroup (50).
	RolesPerGroup int `json:"rolesPerGroup,omitempty"`
	// ClaimNames is how many names a token's groups or roles claim may
	// carry: 1 to MaxClaimNames; 0 means DefaultClaimNames (100). A user
	// with more gets no such claim in its tokens but groups_overage (or
	// roles_overage) true, and the whole list from userinfo: a token
	// must stay small enough for a header.
	ClaimNames int `json:"claimNames,omitempty"`
	// PasskeysPerUser is how many passkeys one user may have: 1 to
	// MaxPasskeysPerUser; 0 means DefaultPasskeysPerUser (10).
	PasskeysPerUser int `json:"passkeysPerUser,omitempty"`
}

// limitSpec is one field of Limits: its name, value, default and bound.
type limitSpec struct {
	field      string
	value      int
	def, bound int
}

// specs lists the fields of l, in the order of the struct.
func (l Limits) specs() []limitSpec {
	return []limitSpec{
		{"limits.attributesPerUser", l.AttributesPerUser, DefaultAttributesPerUser, MaxAttributesPerUser},
		{"limits.webhookEndpoints", l.WebhookEndpoints, DefaultWebhookEndpoints, MaxWebhookEndpoints},
		{"limits.roles", l.Roles, DefaultRoles, MaxRoles},
		{"limits.groups", l.Groups, DefaultGroups, MaxGroups},
		{"limits.groupsPerUser", l.GroupsPerUser, DefaultGroupsPerUser, MaxGroupsPerUser},
		{"limits.rolesPerGroup", l.RolesPerGroup, DefaultRolesPerGroup, MaxRolesPerGroup},
		{"limits.claimNames", l.ClaimNames, DefaultClaimNames, MaxClaimNames},
		{"limits.passkeysPerUser", l.PasskeysPerUser, DefaultPasskeysPerUser, MaxPasskeysPerUser},
	}
}

// or returns value, or def for zero.
func or(value, def int) int {
	if value == 0 {
		return def
	}
	return value
}

func (l Limits) attributesPerUser() int { return or(l.AttributesPerUser, DefaultAttributesPerUser) }
func (l Limits) webhookEndpoints() int  { return or(l.WebhookEndpoints, DefaultWebhookEndpoints) }
func (l Limits) roles() int             { return or(l.Roles, DefaultRoles) }
func (l Limits) groups() int            { return or(l.Groups, DefaultGroups) }
func (l Limits) groupsPerUser() int     { return or(l.GroupsPerUser, DefaultGroupsPerUser) }
func (l Limits) rolesPerGroup() int     { return or(l.RolesPerGroup, DefaultRolesPerGroup) }
func (l Limits) claimNames() int        { return or(l.ClaimNames, DefaultClaimNames) }
func (l Limits) passkeysPerUser() int   { return or(l.PasskeysPerUser, DefaultPasskeysPerUser) }

func (l Limits) validate(p *problems) {
	for _, s := range l.specs() {
		if s.value < 0 || s.value > s.bound {
			p.add(s.field, RuleRange, "must be between 1 and %d (0 means %d)", s.bound, s.def)
		}
	}
}
