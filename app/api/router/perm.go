package router

// Perm is the access class of a route: the auth column of spec section 4,
// with the permission names of section 5. The one authorize middleware of
// app/api enforces it; the document publishes it as x-netmon-permission.
type Perm string

// The access classes of spec sections 4 and 5. The values are the spec's
// codes (the console reads them from the document); the names say what
// each class is.
const (
	Public       Perm = "P"            // no authentication
	Session      Perm = "S"            // any signed-in user or API token
	View         Perm = "view"         // permission "view"
	Operate      Perm = "operate"      // capture and recording control
	Analyze      Perm = "analyze"      // AI and reports
	Devices      Perm = "devices"      // add/delete devices
	ManageAgents Perm = "agents"       // delete agents (a user permission)
	Admin        Perm = "admin"        // users, tokens, changes of compliance records
	Audit        Perm = "audit"        // audit log, compliance evidence and reviews (read): admins and auditors
	GlobalAdmin  Perm = "global-admin" // AI provider management (multi-site)
	// Scrape is /metrics: the scrape token (-metrics-token) as bearer, or
	// an identity with the admin permission (site-bound ones refused by
	// the row's Global).
	Scrape Perm = "metrics"
	// AgentIdentity is an enrolled agent: its bearer agent token or its
	// verified client certificate (spec "AG").
	AgentIdentity Perm = "AG"
	// EnrollToken is an agent that is not enrolled yet, presenting an
	// enroll token in X-Enroll-Token (spec "EN").
	EnrollToken Perm = "EN"
)

// UserPerm reports whether the class is met by a signed-in user or API
// token (S and the RBAC permissions), as opposed to P, AG and EN.
func (p Perm) UserPerm() bool {
	switch p {
	case Public, AgentIdentity, EnrollToken:
		return false
	}
	return true
}
