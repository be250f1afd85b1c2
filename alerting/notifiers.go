package alerting

import "netmon/alerting/notify"

// NotifySettings is alert delivery (*notify.Notifier): the engine hands
// it the notifiers section each time a configuration is applied, so
// delivery never reads the engine (alerting/notify cannot import
// alerting, which imports it).
type NotifySettings interface {
	SetSettings(notify.Settings)
}

// Delivery returns the notifiers section as alert delivery reads it.
func (n Notifiers) Delivery() notify.Settings {
	return notify.Settings{
		Desktop:         n.Desktop,
		GenericURL:      n.GenericURL,
		Chatapp1URL:     n.Chatapp1URL,
		Chatapp2URL:     n.Chatapp2URL,
		MessengerToken:  n.MessengerToken,
		MessengerChatID: n.MessengerChatID,
		TeamchatURL:     n.TeamchatURL,
		WebhookV2URL:    n.WebhookV2URL,
		WebhookV2Secret: n.WebhookV2Secret,
		EmailHost:       n.EmailHost,
		EmailPort:       n.EmailPort,
		EmailFrom:       n.EmailFrom,
		EmailTo:         append([]string(nil), n.EmailTo...),
		EmailUser:       n.EmailUser,
		EmailPass:       n.EmailPass,
		SIEM: notify.SIEM{
			Enabled:   n.SIEM.Enabled,
			Format:    n.SIEM.Format,
			Transport: n.SIEM.Transport,
			Target:    n.SIEM.Target,
			Token:     n.SIEM.Token,
			Insecure:  n.SIEM.Insecure,
			Framing:   n.SIEM.Framing,
		},
		TicketURL:   n.TicketURL,
		TicketToken: n.TicketToken,
	}
}
