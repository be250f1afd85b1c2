package api

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/go-cmp/cmp"

	"netmon/app/api/router"
	"netmon/app/errs"
)

// TestWriteError: every error kind maps to its status and body in the one
// place, and Retry-After is set there (and only for 429 and a 503 that
// names a time).
func TestWriteError(t *testing.T) {
	s, logs := newTestServer(t, &fakePinger{}, nil)
	tests := []struct {
		desc       string
		err        error
		wantStatus int
		wantBody   string
		wantRetry  string
		wantLog    string // substring of the log; "" = nothing logged
	}{
		{"invalid", errs.InvalidField("name", "must not be empty"), 400, `{"error":"name: must not be empty"}`, "", ""},
		{"unauthorized", errs.Unauthorizedf("invalid credentials"), 401, `{"error":"invalid credentials"}`, "", ""},
		{"forbidden", errs.Forbiddenf("not yours"), 403, `{"error":"not yours"}`, "", ""},
		{"not found, wrapped", fmt.Errorf("load: %w", errs.NotFoundf("user not found")), 404, `{"error":"user not found"}`, "", ""},
		{"conflict", errs.Conflictf("taken"), 409, `{"error":"taken"}`, "", ""},
		{"too large", router.TooLarge(10), 413, `{"error":"request body too large: the limit is 10 bytes"}`, "", ""},
		{"throttled without a time gets the spec's 60 s", errs.Throttledf(0, "slow down"), 429, `{"error":"slow down"}`, "60", ""},
		{"throttled rounds its time up", errs.Throttledf(1500*time.Millisecond, "slow down"), 429, `{"error":"slow down"}`, "2", ""},
		{"unavailable without a time", errs.Unavailablef(0, "queue full"), 503, `{"error":"queue full"}`, "", ""},
		{"unavailable with a time and a cause", errs.Unavailablef(5*time.Second, "database down").Wrap(errors.New("dial tcp: refused")), 503,
			`{"error":"database down"}`, "5", "dial tcp: refused"},
		{"HTTP-layer refusal", &router.StatusError{Status: 415, Msg: "not JSON"}, 415, `{"error":"not JSON"}`, "", ""},
		{"body over the reader's limit", &http.MaxBytesError{Limit: 7}, 413, `{"error":"request body too large: the limit is 7 bytes"}`, "", ""},
		{"anything else is a 500 that hides its detail", errors.New("disk on fire"), 500, `{"error":"` + internalMessage + `"}`, "", "disk on fire"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			logs.Reset()
			w := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(w)
			c.Request = httptest.NewRequest("GET", "/", nil)
			s.writeError(c, tt.err)
			if w.Code != tt.wantStatus {
				t.Fatalf("status %d, want %d", w.Code, tt.wantStatus)
			}
			if diff := cmp.Diff(strings.TrimSpace(w.Body.String()), tt.wantBody); diff != "" {
				t.Errorf("body (-got, +want):\n%s", diff)
			}
			if got := w.Header().Get("Retry-After"); got != tt.wantRetry {
				t.Errorf("Retry-After %q, want %q", got, tt.wantRetry)
			}
			if tt.wantLog == "" && logs.Len() > 0 {
				t.Errorf("logged %s", logs)
			}
			if tt.wantLog != "" && !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("log lacks %q: %s", tt.wantLog, logs)
			}
		})
	}
}
