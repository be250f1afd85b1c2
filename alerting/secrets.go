package alerting

import (
	"strconv"
	"strings"

	"netmon/app/errs"
)

// The secrets of the alert configuration (RELIABILITY case 30).
//
// A secret is a credential or a destination that can carry one: the
// tokens and the password, the chat and webhook URLs (their path is the
// credential), the ticket URL and the SIEM HTTP target (a URL whose query
// or userinfo often holds a key). GET shows a set secret as Masked; the
// database keeps them sealed apart from the document (app/api); audit
// records carry the masked form.
//
// An update (Update) reads each secret field as:
//
//	absent, null or Masked   keeps the stored value
//	"" (empty string)        clears it
//	anything else            sets it
//
// A credential bound to a destination cannot be kept when that
// destination changes: siem.token follows siem.target (and
// siem.insecure), email_pass follows email_host and email_port,
// webhook_v2_secret follows webhook_v2_url, ticket_token follows
// ticket_url. Such an update is refused with a 400 naming the credential,
// which must be sent again (or cleared): otherwise an admin who cannot
// read it could point the channel at their own host, press "send test"
// and receive it there.

// Masked is what GET shows in place of a secret that is set; an update
// carrying it keeps the stored secret.
const Masked = "********"

// secretField is one secret of the settings.
type secretField struct {
	// name is the field's path, as a refusal names it.
	name string
	val  *string
	// dest is the destination the secret authenticates when bound ("" =
	// none configured: nothing is sent anywhere).
	dest  string
	bound bool
	// shown is a value that carries no credential in this configuration
	// (a syslog SIEM target, host:port): shown on read, sealed still.
	shown bool
}

// secretFields lists the secrets in the order of the sealed array: a
// stored array from before keeps its meaning, new ones are appended.
func (s *Settings) secretFields() []secretField {
	n := &s.Notifiers
	mail := ""
	if n.EmailHost != "" {
		port := n.EmailPort
		if port == 0 {
			port = 587
		}
		mail = n.EmailHost + ":" + strconv.Itoa(port)
	}
	siem := ""
	if n.SIEM.Target != "" {
		// Turning certificate checks off hands the token to whoever sits
		// on the path: it re-points the token as much as a new target.
		siem = n.SIEM.Target + " insecure=" + strconv.FormatBool(n.SIEM.Insecure)
	}
	return []secretField{
		{name: "notifiers.messenger_token", val: &n.MessengerToken},
		{name: "notifiers.webhook_v2_secret", val: &n.WebhookV2Secret, dest: n.WebhookV2URL, bound: true},
		{name: "notifiers.email_pass", val: &n.EmailPass, dest: mail, bound: true},
		{name: "notifiers.siem.token", val: &n.SIEM.Token, dest: siem, bound: true},
		{name: "notifiers.chatapp1_url", val: &n.Chatapp1URL},
		{name: "notifiers.chatapp2_url", val: &n.Chatapp2URL},
		{name: "notifiers.teamchat_url", val: &n.TeamchatURL},
		{name: "notifiers.generic_url", val: &n.GenericURL},
		{name: "notifiers.webhook_v2_url", val: &n.WebhookV2URL},
		{name: "notifiers.ticket_token", val: &n.TicketToken, dest: n.TicketURL, bound: true},
		{name: "notifiers.ticket_url", val: &n.TicketURL},
		{name: "notifiers.siem.target", val: &n.SIEM.Target, shown: !siemTargetSecret(n.SIEM)},
	}
}

// siemTargetSecret reports whether the SIEM target may carry a
// credential: an HTTP target is a URL (query, userinfo), and so is any
// target that looks like one whatever the transport says.
func siemTargetSecret(s SIEM) bool {
	return s.Transport == "http" || strings.ContainsAny(s.Target, "/@?")
}

// Masked returns s with every secret that is set replaced by Masked.
func (s Settings) Masked() Settings {
	s = s.clone()
	for _, f := range s.secretFields() {
		if *f.val != "" && !f.shown {
			*f.val = Masked
		}
	}
	return s
}

// Update applies a partial document (PUT /api/alerts) to s, the stored
// settings with their secrets: the document is merged over the masked
// form, so a secret the document leaves out or sends masked is kept, an
// empty one is cleared. A kept credential whose destination changed is
// refused, naming it.
func (s Settings) Update(doc []byte) (Settings, error) {
	next, err := s.Masked().Merge(doc)
	if err != nil {
		return s, err
	}
	olds := s.secretFields()
	kept := make([]bool, len(olds))
	for i, f := range next.secretFields() {
		if *f.val == Masked {
			*f.val = *olds[i].val
			kept[i] = true
		}
	}
	// The destinations are read once every kept value is back in place
	// (a destination is often a secret itself, sent masked).
	for i, f := range next.secretFields() {
		if kept[i] && f.bound && *f.val != "" && f.dest != "" && f.dest != olds[i].dest {
			return s, errs.InvalidField(f.name, `the destination changed: send the secret again, or "" to clear it`)
		}
	}
	return next, nil
}

// SplitSecrets returns s with its secrets emptied and the secrets alone,
// in the order of secretFields(): the database keeps the second sealed.
func (s Settings) SplitSecrets() (Settings, []string) {
	s = s.clone()
	var out []string
	for _, f := range s.secretFields() {
		out = append(out, *f.val)
		*f.val = ""
	}
	return s, out
}

// WithSecrets returns s with its secrets set from vals (SplitSecrets'
// second result); missing values stay as they are (an array sealed
// before a secret was added: the document still holds that one).
func (s Settings) WithSecrets(vals []string) Settings {
	s = s.clone()
	for i, f := range s.secretFields() {
		if i < len(vals) {
			*f.val = vals[i]
		}
	}
	return s
}
