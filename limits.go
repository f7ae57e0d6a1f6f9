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
)

// Limits cap what a workspace holds, so that no user and no workspace
// grows without bound: a user's attributes are all read for every token
// and every GET of them, and every event is matched against the
// workspace's endpoints. The zero value of a field is its default. A
// write that would pass a limit is CodeLimitReached, checked in the
// transaction that writes, so the limit holds under concurrency;
// lowering a limit removes nothing, it only refuses additions.
type Limits struct {
	// AttributesPerUser is how many attributes one user may have: 1 to
	// MaxAttributesPerUser; 0 means DefaultAttributesPerUser (100).
	AttributesPerUser int `json:"attributesPerUser,omitempty"`
	// WebhookEndpoints is how many webhook endpoints the workspace may
	// have: 1 to MaxWebhookEndpoints; 0 means DefaultWebhookEndpoints
	// (50).
	WebhookEndpoints int `json:"webhookEndpoints,omitempty"`
}

func (l Limits) attributesPerUser() int {
	if l.AttributesPerUser == 0 {
		return DefaultAttributesPerUser
	}
	return l.AttributesPerUser
}

func (l Limits) webhookEndpoints() int {
	if l.WebhookEndpoints == 0 {
		return DefaultWebhookEndpoints
	}
	return l.WebhookEndpoints
}

func (l Limits) validate(p *problems) {
	if l.AttributesPerUser < 0 || l.AttributesPerUser > MaxAttributesPerUser {
		p.add("limits.attributesPerUser", RuleRange, "must be between 1 and %d (0 means %d)", MaxAttributesPerUser, DefaultAttributesPerUser)
	}
	if l.WebhookEndpoints < 0 || l.WebhookEndpoints > MaxWebhookEndpoints {
		p.add("limits.webhookEndpoints", RuleRange, "must be between 1 and %d (0 means %d)", MaxWebhookEndpoints, DefaultWebhookEndpoints)
	}
}
