package notify

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"netmon/store/storetest"
)

// TestSendReport mails a report through the real SMTP peer (STARTTLS,
// AUTH): the attachment arrives byte for byte under its name and type,
// to the report's recipients (not the channel's); without a configured
// server it is ErrEmailNotConfigured; a refused recipient is the
// classified reason, never the server's words.
func TestSendReport(t *testing.T) {
	port, maildir, trust := smtpd(t)
	db := storetest.OpenSQLite(t)
	s := Settings{EmailHost: "127.0.0.1", EmailPort: port, EmailFrom: "netmon@example.test",
		EmailTo: []string{"alerts@example.test"}, EmailUser: "testuser", EmailPass: "testpass"}
	box := newBox(s)
	n, _ := startNotifier(t, db, testConfig(), box, Deps{EmailTLS: trust})
	data := []byte("%PDF-1.7\n\x00\xff\xfe binary")
	err := n.SendReport(t.Context(), []string{"boss@example.test"}, "[netmon] traffic report", "attached",
		"netmon-traffic-all-20261121-20261127.pdf", "application/pdf", data)
	if err != nil {
		t.Fatal(err)
	}
	emls, _ := filepath.Glob(filepath.Join(maildir, "*.eml"))
	if len(emls) != 1 {
		t.Fatalf("%d messages, want 1", len(emls))
	}
	raw, _ := os.ReadFile(emls[0])
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if got := msg.Header.Get("To"); got != "<boss@example.test>" {
		t.Errorf("To %q, want the report's recipient only", got)
	}
	if got := msg.Header.Get("Subject"); got != "[netmon] traffic report" {
		t.Errorf("Subject %q", got)
	}
	_, params, _ := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	mr := multipart.NewReader(msg.Body, params["boundary"])
	var found bool
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if p.FileName() == "" {
			continue
		}
		found = true
		b, _ := io.ReadAll(base64.NewDecoder(base64.StdEncoding, p))
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if p.FileName() != "netmon-traffic-all-20261121-20261127.pdf" || ct != "application/pdf" || !bytes.Equal(b, data) {
			t.Errorf("attachment %q %q %q, want the report", p.FileName(), ct, b)
		}
	}
	if !found {
		t.Error("no attachment")
	}

	err = n.SendReport(t.Context(), []string{"refused@example.test"}, "s", "b", "r.pdf", "application/pdf", data)
	if err == nil || err.Error() != ReasonRecipient || strings.Contains(err.Error(), "PEER-TEXT-MARKER") {
		t.Errorf("refused recipient: %v, want %q", err, ReasonRecipient)
	}
	box.set(Settings{})
	err = n.SendReport(t.Context(), []string{"boss@example.test"}, "s", "b", "r.pdf", "application/pdf", data)
	if !errors.Is(err, ErrEmailNotConfigured) {
		t.Errorf("not configured: %v, want ErrEmailNotConfigured", err)
	}
}
