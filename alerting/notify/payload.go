package notify

import (
	"fmt"
	"strconv"
	"time"

	"netmon/alerting/siem"
	"netmon/store/record"
)

// The JSON bodies of the HTTP channels (documented in the README,
// "Alert delivery").

// summary is the one-line text of chat and messenger messages:
// "[netmon] CRIT port: message (key)".
func summary(ev record.AlertEvent) string {
	s := fmt.Sprintf("[netmon] %s %s: %s", severityWord(ev.Severity), ev.Kind, ev.Message)
	if ev.Key != "" {
		s += " (" + ev.Key + ")"
	}
	if ev.Site != "" {
		s += " site " + ev.Site
	}
	return s
}

// severityWord names the 0-10 scale's bands (CEF's low, medium, high,
// very high).
func severityWord(sev int) string {
	switch {
	case sev >= 9:
		return "CRIT"
	case sev >= 7:
		return "HIGH"
	case sev >= 4:
		return "WARN"
	}
	return "INFO"
}

// color is the embed and card colour of a severity.
func color(sev int) int {
	switch {
	case sev >= 9:
		return 0xD70000
	case sev >= 7:
		return 0xFF8C00
	case sev >= 4:
		return 0xFFD700
	}
	return 0x1E90FF
}

// chat1Body is the incoming-webhook chat body: {"text": ...}.
type chat1Body struct {
	Text string `json:"text"`
}

// chat2Body is the webhook chat body: content plus one embed.
type chat2Body struct {
	Content string       `json:"content"`
	Embeds  []chat2Embed `json:"embeds"`
}

type chat2Embed struct {
	Title       string       `json:"title"`
	Description string       `json:"description"`
	Color       int          `json:"color"`
	Timestamp   string       `json:"timestamp"`
	Fields      []chat2Field `json:"fields"`
}

type chat2Field struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Inline bool   `json:"inline"`
}

func chat2(ev record.AlertEvent) chat2Body {
	return chat2Body{Content: summary(ev), Embeds: []chat2Embed{{
		Title:       siem.Label(ev.Kind),
		Description: ev.Message,
		Color:       color(ev.Severity),
		Timestamp:   time.Unix(ev.TS, 0).UTC().Format(time.RFC3339),
		Fields: []chat2Field{
			{Name: "kind", Value: ev.Kind, Inline: true},
			{Name: "severity", Value: strconv.Itoa(ev.Severity), Inline: true},
			{Name: "key", Value: orDash(ev.Key), Inline: false},
			{Name: "site", Value: orDash(ev.Site), Inline: true},
		},
	}}}
}

// messengerBody is the bot API sendMessage body.
type messengerBody struct {
	ChatID string `json:"chat_id"`
	Text   string `json:"text"`
}

// cardBody is the team chat message card.
type cardBody struct {
	Type       string        `json:"@type"`
	Context    string        `json:"@context"`
	Summary    string        `json:"summary"`
	ThemeColor string        `json:"themeColor"`
	Title      string        `json:"title"`
	Text       string        `json:"text"`
	Sections   []cardSection `json:"sections"`
}

type cardSection struct {
	Facts []cardFact `json:"facts"`
}

type cardFact struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func card(ev record.AlertEvent) cardBody {
	return cardBody{
		Type: "MessageCard", Context: "https://schema.org/extensions",
		Summary:    summary(ev),
		ThemeColor: fmt.Sprintf("%06X", color(ev.Severity)),
		Title:      "netmon: " + siem.Label(ev.Kind),
		Text:       ev.Message,
		Sections: []cardSection{{Facts: []cardFact{
			{Name: "Kind", Value: ev.Kind},
			{Name: "Severity", Value: strconv.Itoa(ev.Severity)},
			{Name: "Key", Value: orDash(ev.Key)},
			{Name: "Site", Value: orDash(ev.Site)},
			{Name: "Fired", Value: time.Unix(ev.TS, 0).UTC().Format(time.RFC3339)},
		}}},
	}
}

// webhookV2Body is the signed webhook's body.
type webhookV2Body struct {
	Version  int               `json:"version"`
	Delivery int64             `json:"delivery"`
	Event    record.AlertEvent `json:"event"`
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
