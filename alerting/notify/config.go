package notify

import "time"

// Config is the notifier's start-up tuning; which channels exist is the
// operator's Settings (the notifiers section of the alert configuration).
type Config struct {
	// QueueSize bounds the events the engine hands over and the notifier
	// has not routed yet. Full, the source (agent and rule) holding the
	// most loses its lowest severity, newest event, counted by reason
	// (netmon_notify_dropped_total): the engine never waits on delivery,
	// and a storm never displaces another source's event.
	QueueSize int
	// RateBurst is how many events of one source (agent and rule) a
	// channel sends at once before the rate limit holds the rest back
	// for a digest; negative: no limit.
	RateBurst int
	// RateEvery is how often a channel gives a source one more event
	// (the bucket refill).
	RateEvery time.Duration
	// DigestEvery is how often the events held back by the rate limit go
	// out, one digest per channel and source ("and 19 999 more ...").
	DigestEvery time.Duration
	// Batch is how many due deliveries of one channel are taken at once.
	Batch int
	// Parallel is how many sends of one channel run at once; a slow
	// receiver holds only its own channel's senders.
	Parallel int
	// Timeout bounds one send.
	Timeout time.Duration
	// RetryFirst is the pause after the first failure; it doubles up to
	// RetryMax.
	RetryFirst time.Duration
	// RetryMax caps the pause between attempts.
	RetryMax time.Duration
	// GiveUpAfter is how long after routing a delivery is retried before
	// it is marked failed.
	GiveUpAfter time.Duration
	// Poll is how often each channel looks for due deliveries when
	// nothing woke it (retries, deliveries a previous run left pending).
	Poll time.Duration
	// MessengerBaseURL is the bot API base of the messenger channel
	// (POST <base>/bot<token>/sendMessage); tests point it at a local server.
	MessengerBaseURL string
	// Hostname names this hub in SIEM syslog lines and e-mail (os.Hostname
	// when empty).
	Hostname string
}

// DefaultConfig returns the tuning used by the hub: 10 000 queued
// events, retries from 5 s doubling to 5 min for up to 1 h, 20 events
// of a source at once per channel then one a minute, digests every
// minute.
func DefaultConfig() Config {
	return Config{
		QueueSize:        10000,
		RateBurst:        20,
		RateEvery:        time.Minute,
		DigestEvery:      time.Minute,
		Batch:            256,
		Parallel:         8,
		Timeout:          15 * time.Second,
		RetryFirst:       5 * time.Second,
		RetryMax:         5 * time.Minute,
		GiveUpAfter:      time.Hour,
		Poll:             2 * time.Second,
		MessengerBaseURL: "https://api.telegram.org",
	}
}

// Settings are the channels of spec 2.5 notifiers (alerting.Notifiers
// with the same JSON names; the engine hands them over with
// Notifiers.Delivery on each configuration it applies, SetSettings).
type Settings struct {
	Desktop         bool     `json:"desktop"`
	GenericURL      string   `json:"generic_url"`
	Chatapp1URL     string   `json:"chatapp1_url"`
	Chatapp2URL     string   `json:"chatapp2_url"`
	MessengerToken  string   `json:"messenger_token"`
	MessengerChatID string   `json:"messenger_chat_id"`
	TeamchatURL     string   `json:"teamchat_url"`
	WebhookV2URL    string   `json:"webhook_v2_url"`
	WebhookV2Secret string   `json:"webhook_v2_secret"`
	EmailHost       string   `json:"email_host"`
	EmailPort       int      `json:"email_port"`
	EmailFrom       string   `json:"email_from"`
	EmailTo         []string `json:"email_to"`
	EmailUser       string   `json:"email_user"`
	EmailPass       string   `json:"email_pass"`
	SIEM            SIEM     `json:"siem"`
	TicketURL       string   `json:"ticket_url"`
	TicketToken     string   `json:"ticket_token"`
}

// SIEM is notifiers.siem.
type SIEM struct {
	Enabled   bool   `json:"enabled"`
	Format    string `json:"format"`
	Transport string `json:"transport"`
	Target    string `json:"target"`
	Token     string `json:"token"`
	Insecure  bool   `json:"insecure"`
	Framing   string `json:"framing"`
}

// Channel names, as routes, the delivery log and the metrics spell them.
const (
	GenericURL = "generic_url"
	Chatapp1   = "chatapp1"
	Chatapp2   = "chatapp2"
	Messenger  = "messenger"
	Teamchat   = "teamchat"
	Email      = "email"
	WebhookV2  = "webhook_v2"
	SIEMChan   = "siem"
	Ticket     = "ticket"
)

// Channels lists every server-side channel (desktop is the console's:
// it shows the events the /ws feed carries).
var Channels = []string{GenericURL, Chatapp1, Chatapp2, Messenger, Teamchat, Email, WebhookV2, SIEMChan, Ticket}

// Enabled returns the channels s configures, in Channels order.
func (s Settings) Enabled() []string {
	var out []string
	for _, c := range Channels {
		if s.enabled(c) {
			out = append(out, c)
		}
	}
	return out
}

func (s Settings) enabled(c string) bool {
	switch c {
	case GenericURL:
		return s.GenericURL != ""
	case Chatapp1:
		return s.Chatapp1URL != ""
	case Chatapp2:
		return s.Chatapp2URL != ""
	case Messenger:
		return s.MessengerToken != "" && s.MessengerChatID != ""
	case Teamchat:
		return s.TeamchatURL != ""
	case Email:
		return s.EmailHost != "" && len(s.EmailTo) > 0
	case WebhookV2:
		return s.WebhookV2URL != ""
	case SIEMChan:
		return s.SIEM.Enabled && s.SIEM.Target != ""
	case Ticket:
		return s.TicketURL != ""
	}
	return false
}
