package identity

// EventType names a kind of event that webhook endpoints subscribe to.
type EventType string

// The event catalogue.
const (
	// EventUserCreated: a user was created.
	EventUserCreated EventType = "user.created"
	// EventLoginFailed: an authentication attempt failed.
	EventLoginFailed EventType = "login.failed"
	// EventSessionRevoked: a session was revoked.
	EventSessionRevoked EventType = "session.revoked"
)

// EventTypes returns the catalogue of event types in a stable order.
func EventTypes() []EventType {
	return []EventType{EventUserCreated, EventLoginFailed, EventSessionRevoked}
}

// Known reports whether e is in the catalogue.
func (e EventType) Known() bool {
	for _, k := range EventTypes() {
		if e == k {
			return true
		}
	}
	return false
}
