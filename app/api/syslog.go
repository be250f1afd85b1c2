package api

import (
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"netmon/store"
)

// syslogIn is the query of GET /api/v1/syslog. Every filter runs in the
// store, so the newest matching rows come back however far back they are.
type syslogIn struct {
	Limit      int    `query:"limit" min:"1" max:"1000" default:"100" doc:"newest matching events to return"`
	Before     int64  `query:"before" min:"0" doc:"cursor: only events with an id below this one (pass the last id of the previous page; 0: from the newest)"`
	Severity   int    `query:"severity" min:"0" max:"7" default:"7" doc:"this severity and worse: 0 (emergency) to severity; 7 keeps all"`
	Severities string `query:"severities" doc:"exactly these severities, comma-separated (0-7), for example 0,1,2; applies with severity"`
	Host       string `query:"host" doc:"only this host field (whole value, ASCII case ignored)"`
	Tag        string `query:"tag" doc:"only this tag (whole value, ASCII case ignored)"`
	Text       string `query:"text" doc:"only messages containing this text (ASCII case ignored; % and _ match themselves)"`
	From       int64  `query:"from" min:"0" doc:"earliest ts, Unix seconds (inclusive)"`
	To         int64  `query:"to" min:"0" doc:"latest ts, Unix seconds (inclusive)"`
}

func (s *Server) syslog(c *gin.Context, in *syslogIn) ([]SyslogRow, error) {
	sevs, err := severityList(in.Severities)
	if err != nil {
		return nil, err
	}
	if in.From > 0 && in.To > 0 && in.To < in.From {
		return nil, invalidField("to", "query parameter %q: must not be before from", "to")
	}
	rows, err := s.deps.Flows.QuerySyslog(c, store.SyslogQuery{
		Limit: in.Limit, Before: in.Before, From: in.From, To: in.To,
		MaxSeverity: in.Severity, Severities: sevs,
		Host: in.Host, Tag: in.Tag, Text: in.Text,
		Site: callerOf(c).SiteFilter(),
	})
	return convertAll(rows, syslogRowOf), err
}

// severityList parses "0,2,5": each a severity 0-7, duplicates dropped;
// "" is no filter.
func severityList(v string) ([]int, error) {
	if v == "" {
		return nil, nil
	}
	var out []int
	seen := [8]bool{}
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 || n > 7 {
			return nil, invalidField("severities", "query parameter %q: must be severities 0-7 separated by commas", "severities")
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}
