package api

import (
	"context"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"netmon/store"
	"netmon/store/flowagg"
)

// FlowStore is what the flow, syslog and event routes read (*store.DB).
// TopFlows and the conversations add open, the minutes not written yet,
// to the stored ones.
type FlowStore interface {
	TopFlows(ctx context.Context, from int64, limit int, site string, f store.FlowFilter, open []flowagg.Minute) ([]store.FlowRow, error)
	PairFlows(ctx context.Context, a, b string, from int64, limit int, site string, open []flowagg.Minute) ([]store.FlowRow, error)
	Conversations(ctx context.Context, from int64, by5 bool, sort string, limit int, site string, f store.FlowFilter, open []flowagg.Minute) ([]store.Conversation, error)
	ConversationsHourly(ctx context.Context, fromHour int64, by5 bool, sort string, limit int, site string, f store.FlowFilter, open []flowagg.Minute) ([]store.Conversation, error)
	FlowSeries(ctx context.Context, from, to int64, dim string, top int, site string, f store.FlowFilter, open []flowagg.Minute) (*store.FlowSeries, error)
	QuerySyslog(ctx context.Context, q store.SyslogQuery) ([]store.SyslogRow, error)
	FlowEvents(ctx context.Context, since int64, f store.FlowFilter, after *store.EventCursor, limit int, site string) ([]store.Event, error)
	SyslogEvents(ctx context.Context, since int64, device, addr string, after *store.EventCursor, limit int, site string) ([]store.Event, error)
}

// OpenFlows is the ingest queue's side of a flow read (*queue.Channel):
// it calls read with the flow minutes not written yet, again if a minute
// was written meanwhile, so that read, adding them to the stored ones,
// counts each flow once.
type OpenFlows interface {
	ReadOpenFlows(ctx context.Context, read func(open []flowagg.Minute) error) error
}

// withOpen runs read with the open flow minutes (none without an
// ingest queue).
func (s *Server) withOpen(ctx context.Context, read func(open []flowagg.Minute) error) error {
	if s.deps.OpenFlows == nil {
		return read(nil)
	}
	return s.deps.OpenFlows.ReadOpenFlows(ctx, read)
}

type flowsIn struct {
	Minutes  int    `query:"minutes" min:"1" max:"360" default:"15" doc:"window ending now, in minutes (at most 6 hours)"`
	Limit    int    `query:"limit" min:"1" max:"1000" default:"20" doc:"rows to return"`
	Exporter string `query:"exporter" doc:"only this exporter's flows (its IP address)"`
	Addr     string `query:"addr" doc:"only flows from or to this IP address"`
	Port     int    `query:"port" min:"1" max:"65535" doc:"only flows from or to this port"`
	Proto    int    `query:"proto" min:"1" max:"255" doc:"only this IP protocol number (6 TCP, 17 UDP, 1 ICMP, 58 ICMPv6)"`
}

func (s *Server) flows(c *gin.Context, in *flowsIn) ([]FlowRow, error) {
	f, err := flowFilter(in.Exporter, in.Addr, in.Port, in.Proto)
	if err != nil {
		return nil, err
	}
	from := time.Now().Add(-time.Duration(in.Minutes) * time.Minute).Unix()
	var rows []store.FlowRow
	err = s.withOpen(c, func(open []flowagg.Minute) (err error) {
		rows, err = s.deps.Flows.TopFlows(c, from, in.Limit, callerOf(c).SiteFilter(), f, open)
		return err
	})
	return convertAll(rows, flowRowOf), err
}

type conversationsIn struct {
	By     string `query:"by" enum:"5tuple,pair" default:"5tuple" doc:"group by 5-tuple, or by address pair with both directions merged"`
	Window string `query:"window" enum:"15m,1h,6h,24h" default:"1h" doc:"window ending now"`
	Sort   string `query:"sort" enum:"octets,packets,flows,last_seen" default:"octets" doc:"order, descending"`
	Limit  int    `query:"limit" min:"1" max:"1000" default:"50" doc:"groups to return"`
	// The filters of GET /api/v1/flows.
	Exporter string `query:"exporter" doc:"only this exporter's flows (its IP address)"`
	Addr     string `query:"addr" doc:"only flows from or to this IP address"`
	Port     int    `query:"port" min:"1" max:"65535" doc:"only flows from or to this port"`
	Proto    int    `query:"proto" min:"1" max:"255" doc:"only this IP protocol number (6 TCP, 17 UDP, 1 ICMP, 58 ICMPv6)"`
}

// flowWindow is a window of the conversations, ending now; the API
// serves the names as its FlowWindow enumeration (enums.go), and the
// Window parameter's enum tag must list the same (TestEnumTags).
type flowWindow struct {
	name string
	d    time.Duration
}

func flowWindows() []flowWindow {
	return []flowWindow{{"15m", 15 * time.Minute}, {"1h", time.Hour}, {"6h", 6 * time.Hour}, {"24h", 24 * time.Hour}}
}

// windowOf is the duration of a window the binder accepted.
func windowOf(name string) time.Duration {
	for _, w := range flowWindows() {
		if w.name == name {
			return w.d
		}
	}
	return 0
}

// pairPull is how many directed pairs are read before both directions are
// merged (spec 8).
const pairPull = 2000

func (s *Server) conversations(c *gin.Context, in *conversationsIn) ([]Conversation, error) {
	f, err := flowFilter(in.Exporter, in.Addr, in.Port, in.Proto)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	from := now.Add(-windowOf(in.Window)).Unix()
	site := callerOf(c).SiteFilter()
	query := func(by5 bool, limit int) (out []store.Conversation, err error) {
		err = s.withOpen(c, func(open []flowagg.Minute) (err error) {
			if windowOf(in.Window) >= 6*time.Hour {
				// Whole hours from the hourly roll-up (a bounded number of
				// rows per exporter hour), the hours not rolled up yet from
				// their minutes: the window starts at its first hour's start.
				out, err = s.deps.Flows.ConversationsHourly(c, from, by5, in.Sort, limit, site, f, open)
				return err
			}
			out, err = s.deps.Flows.Conversations(c, from, by5, in.Sort, limit, site, f, open)
			return err
		})
		return out, err
	}
	if in.By == "5tuple" {
		out, err := query(true, in.Limit)
		return convertAll(out, conversationOf), err
	}
	directed, err := query(false, pairPull)
	if err != nil {
		return nil, err
	}
	return convertAll(mergePairs(directed, in.Sort, in.Limit), conversationOf), nil
}

// mergePairs adds the two directions of each address pair together; the
// pair is named in the direction that carried more octets. The store's
// remainder row (Truncated) stays last, grown by the pairs the limit cuts,
// so the rows still add up to the window's totals.
func mergePairs(directed []store.Conversation, sortBy string, limit int) []store.Conversation {
	type key struct{ a, b string }
	idx := map[key]int{}
	var out []store.Conversation
	var rest []store.Conversation
	dirOctets := map[key]int64{}
	for _, d := range directed {
		if d.Truncated {
			rest = append(rest, d)
			continue
		}
		k := key{d.Src, d.Dst}
		if d.Dst < d.Src {
			k = key{d.Dst, d.Src}
		}
		i, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			out = append(out, d)
			dirOctets[k] = d.Octets
			continue
		}
		m := &out[i]
		if d.Octets > dirOctets[k] {
			m.Src, m.Dst = d.Src, d.Dst
			dirOctets[k] = d.Octets
		}
		m.Packets += d.Packets
		m.Octets += d.Octets
		m.Flows += d.Flows
		m.First = min(m.First, d.First)
		m.LastSeen = max(m.LastSeen, d.LastSeen)
	}
	val := func(c store.Conversation) int64 {
		switch sortBy {
		case "packets":
			return c.Packets
		case "flows":
			return c.Flows
		case "last_seen":
			return c.LastSeen
		}
		return c.Octets
	}
	sort.SliceStable(out, func(i, j int) bool { return val(out[i]) > val(out[j]) })
	if len(out) > limit {
		if len(rest) == 0 {
			rest = []store.Conversation{{Truncated: true, First: out[limit].First, LastSeen: out[limit].LastSeen}}
		}
		r := &rest[0]
		for _, c := range out[limit:] {
			r.Packets += c.Packets
			r.Octets += c.Octets
			r.Flows += c.Flows
			r.First = min(r.First, c.First)
			r.LastSeen = max(r.LastSeen, c.LastSeen)
		}
		out = out[:limit]
	}
	out = append(out, rest...)
	if out == nil {
		out = []store.Conversation{}
	}
	return out
}

type conversationIn struct {
	Src     string `query:"src" required:"true" doc:"one address of the pair"`
	Dst     string `query:"dst" required:"true" doc:"the other address"`
	Minutes int    `query:"minutes" min:"1" max:"10080" default:"1440" doc:"window ending now"`
	Limit   int    `query:"limit" min:"1" max:"5000" default:"500" doc:"minute rows to return"`
}

// EndpointInfo is GeoIP about one end of a conversation.
type EndpointInfo struct {
	IP      string `json:"ip"`
	Country string `json:"country"`
	ASN     string `json:"asn"`
	Private bool   `json:"private"`
}

// ConversationDetail is GET /api/v1/flows/conversation.
type ConversationDetail struct {
	Src   EndpointInfo `json:"src"`
	Dst   EndpointInfo `json:"dst"`
	Flows []FlowRow    `json:"flows"`
}

func (s *Server) conversation(c *gin.Context, in *conversationIn) (ConversationDetail, error) {
	a, err := netip.ParseAddr(in.Src)
	if err != nil {
		return ConversationDetail{}, invalidField("src", "query parameter \"src\": must be an IP address")
	}
	b, err := netip.ParseAddr(in.Dst)
	if err != nil {
		return ConversationDetail{}, invalidField("dst", "query parameter \"dst\": must be an IP address")
	}
	from := time.Now().Add(-time.Duration(in.Minutes) * time.Minute).Unix()
	var rows []store.FlowRow
	err = s.withOpen(c, func(open []flowagg.Minute) (err error) {
		rows, err = s.deps.Flows.PairFlows(c, a.String(), b.String(), from, in.Limit, callerOf(c).SiteFilter(), open)
		return err
	})
	if err != nil {
		return ConversationDetail{}, err
	}
	return ConversationDetail{Src: s.endpointInfo(a), Dst: s.endpointInfo(b), Flows: convertAll(rows, flowRowOf)}, nil
}

func (s *Server) endpointInfo(a netip.Addr) EndpointInfo {
	e := EndpointInfo{IP: a.String(), Private: a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast()}
	if s.deps.Geo != nil {
		e.Country, e.ASN, _ = s.deps.Geo.Lookup(a)
	}
	return e
}

type eventsIn struct {
	Type     string `query:"type" enum:"netflow.flow,syslog.received,dns.query,tls.sni_observed,http.host_observed,connection.seen" doc:"only this type"`
	AgentID  int64  `query:"agent_id" min:"0" doc:"only this agent's observations (dns.query, tls.sni_observed, http.host_observed, connection.seen)"`
	Device   string `query:"device" doc:"only this exporter or syslog source address"`
	Exporter string `query:"exporter" doc:"as device: only this exporter or syslog source (its IP address)"`
	Addr     string `query:"addr" doc:"only events of this IP address: netflow.flow src or dst, connection.seen remote_ip, syslog.received source"`
	Port     int    `query:"port" min:"1" max:"65535" doc:"only netflow.flow events from or to this port and connection.seen events to this remote port; other types have no events when it is set"`
	Proto    int    `query:"proto" min:"1" max:"255" doc:"only netflow.flow events of this IP protocol number and connection.seen events of it (6 tcp, 17 udp); other types have no events when it is set"`
	Domain   string `query:"domain" doc:"only dns.query domains and tls.sni_observed / http.host_observed hosts equal to this name; *.example.com also keeps its subdomains; other types have no events when it is set"`
	SinceMin int    `query:"since_min" min:"1" max:"10080" default:"60" doc:"window ending now, in minutes"`
	Before   string `query:"before" doc:"cursor: the next_before of the previous page, or a Unix timestamp (events strictly older)"`
	Limit    int    `query:"limit" min:"1" max:"1000" default:"100" doc:"events per page"`
}

// EventPage is a page of GET /api/v1/events, newest first.
type EventPage struct {
	Events []FlowEvent `json:"events"`
	// NextBefore is the cursor of the next page ("" on the last page).
	NextBefore string `json:"next_before"`
}

func parseCursor(s string) (*store.EventCursor, error) {
	if s == "" {
		return nil, nil
	}
	if ts, err := strconv.ParseInt(s, 10, 64); err == nil {
		// A plain time: everything strictly older ("~" sorts after every type).
		return &store.EventCursor{TS: ts, Type: "~"}, nil
	}
	parts := strings.SplitN(s, "~", 3)
	if len(parts) != 3 {
		return nil, invalidField("before", "query parameter \"before\": must be a Unix timestamp or a next_before cursor")
	}
	ts, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return nil, invalidField("before", "query parameter \"before\": must be a Unix timestamp or a next_before cursor")
	}
	return &store.EventCursor{TS: ts, Type: parts[1], Key: parts[2]}, nil
}

func (s *Server) events(c *gin.Context, in *eventsIn) (EventPage, error) {
	after, err := parseCursor(in.Before)
	if err != nil {
		return EventPage{}, err
	}
	ff, err := flowFilter(in.Exporter, in.Addr, in.Port, in.Proto)
	if err != nil {
		return EventPage{}, err
	}
	if in.Device != "" {
		// device is the older name of the same filter, taken as given.
		if ff.Exporter != "" && ff.Exporter != in.Device {
			return EventPage{}, invalidField("exporter", "query parameter \"exporter\": differs from device (they are the same filter)")
		}
		ff.Exporter = in.Device
	}
	domain, err := domainParam(in.Domain)
	if err != nil {
		return EventPage{}, err
	}
	ef := store.EventFilter{Addr: ff.Addr, Port: ff.Port, Proto: ff.Proto, Domain: domain}
	page := EventPage{Events: []FlowEvent{}}
	since := time.Now().Add(-time.Duration(in.SinceMin) * time.Minute).Unix()
	site := callerOf(c).SiteFilter()
	// Agent observations (deep.go); flows and syslog are no agent's.
	all, err := s.deepEvents(c, in, ef, since, after)
	if err != nil {
		return EventPage{}, err
	}
	devices := in.AgentID == 0
	if devices && (in.Type == "" || in.Type == "netflow.flow") && ef.Applies("netflow.flow") {
		fs, err := s.deps.Flows.FlowEvents(c, since, ff, after, in.Limit+1, site)
		if err != nil {
			return EventPage{}, err
		}
		all = append(all, fs...)
	}
	if devices && (in.Type == "" || in.Type == "syslog.received") && ef.Applies("syslog.received") {
		ss, err := s.deps.Flows.SyslogEvents(c, since, ff.Exporter, ff.Addr, after, in.Limit+1, site)
		if err != nil {
			return EventPage{}, err
		}
		all = append(all, ss...)
	}
	// Each source is already in its order; merging keeps it (a stable sort
	// on ts, then type), so paging never skips or repeats.
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].TS != all[j].TS {
			return all[i].TS > all[j].TS
		}
		return all[i].Type < all[j].Type
	})
	if len(all) > in.Limit {
		all = all[:in.Limit]
		last := all[len(all)-1]
		page.NextBefore = strconv.FormatInt(last.TS, 10) + "~" + last.Type + "~" + last.Key
	}
	page.Events = append(page.Events, convertAll(all, flowEventOf)...)
	return page, nil
}
