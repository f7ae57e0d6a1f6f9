package store

// Bulk is the optional interface of a Tx that reads or writes in one
// request to its database what the Tx methods would read or write record
// by record. A store a network away from its database (pgstore)
// implements it, so that an import of ten thousand users costs a few round
// trips instead of tens of thousands, and a user's claims one instead of
// three. A store in the same process as its data (boltstore, memstore)
// need not: the identity package uses Bulk when the Tx implements it and
// the Tx methods otherwise, with the same results and errors either way.
//
// Bulk decides no rule either: InsertUsers writes what it is given, and
// the identity package has checked it first, in the same transaction.
//
// What the front guarantees. RunView and RunUpdate pass fn a Tx that
// implements Bulk exactly when the store's own Tx does, with the same
// lifecycle checks as for the Tx methods: InsertUsers is a write
// (ErrReadOnly in a View), and every method returns ErrTxDone once fn
// has returned. The front also passes InsertUsers only second factors
// whose UserID is the ID of the user they come with, and positive.
type Bulk interface {
	// UserKeysTaken reports, for each of usernames and for each of
	// emails, in the order given, whether its Fold belongs to a user of
	// the workspace: whether UserIDByUsername, or UserIDByEmail, would
	// find a user. It returns ErrNotFound when the workspace does not
	// exist.
	UserKeysTaken(slug string, usernames, emails []string) (usernameTaken, emailTaken []bool, err error) //guard:read

	// InsertUsers creates users none of whose ids is in use, each with its
	// attributes, roles, group memberships and second factor, as PutUser,
	// PutUserAttribute, AddUserRole, AddGroupMember and PutSecondFactor
	// would one by one, indexes and counts included. It returns ErrConflict when an id is in use or the Fold of
	// a username or an email belongs to another user (of the workspace or
	// of the batch), and ErrNotFound when the workspace does not exist.
	// After an error the Tx may refuse every later call, as after a
	// failed statement: fn should return an error, and nothing of the
	// transaction is kept.
	InsertUsers(slug string, users []UserInsert) error //guard:write

	// UserWithClaimInputs returns in one read what User(slug, id),
	// UserAttributes(slug, id) and ClaimMappers(slug) would return: the
	// user, its attributes (an empty, non-nil map when there are none)
	// and the workspace's claim mappers in ascending AttributeKey order.
	// It returns ErrNotFound when the workspace or the user does not
	// exist.
	UserWithClaimInputs(slug string, id int64) (User, map[string]string, []ClaimMapper, error) //guard:read

	// UserWithAttributes returns in one read what User(slug, id) and
	// UserAttributes(slug, id) would return: the user and its attributes
	// (an empty, non-nil map when there are none). It returns ErrNotFound
	// when the workspace or the user does not exist.
	UserWithAttributes(slug string, id int64) (User, map[string]string, error) //guard:read

	// UserAccess returns in one read what the user holds: what
	// UserRoles(slug, id) and UserGroups(slug, id) would return, the
	// records of those groups (Group), and the roles each group carries
	// (GroupRoles), with the records of every role among them (Role). It
	// returns ErrNotFound when the workspace or the user does not exist.
	UserAccess(slug string, id int64) (UserAccess, error) //guard:read
}

// UserAccess is what a user holds, as Bulk.UserAccess reads it.
type UserAccess struct {
	// Direct are the ids of the roles assigned to the user directly,
	// ascending.
	Direct []int64
	// Groups are the groups the user is a member of, in ascending id
	// order.
	Groups []Group
	// GroupRoles holds, for each of Groups that carries roles, the ids of
	// its roles, ascending.
	GroupRoles map[int64][]int64
	// Roles are the records of every role in Direct and GroupRoles, in
	// ascending id order, each once.
	Roles []Role
}

// UserInsert is one user of Bulk.InsertUsers, with what belongs to it.
type UserInsert struct {
	User User
	// Attributes are the user's attributes; nil or empty for none.
	Attributes map[string]string
	// Roles are the user's directly assigned role ids; an id given twice
	// is assigned once, as AddUserRole would.
	Roles []int64
	// Groups are the ids of the groups the user is a member of; an id
	// given twice is added once, as AddGroupMember would.
	Groups []int64
	// SecondFactor is the user's second factor, or nil for none. Its
	// UserID is User.ID.
	SecondFactor *SecondFactor
}
