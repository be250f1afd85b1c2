package api

import (
	"time"

	"netmon/app/api/router"
	"netmon/collectors/flows"
	"netmon/store"
	"netmon/store/flowagg"

	"github.com/gin-gonic/gin"
)

type flowSeriesIn struct {
	By       string `query:"by" enum:"exporter,src,dst,port,proto" default:"dst" doc:"dimension: exporter, source or destination address, port (the lower of the two ports: the service side as a rule) or IP protocol number"`
	Top      int    `query:"top" min:"1" max:"20" default:"5" doc:"how many values of the dimension, by octets over the window"`
	Minutes  int    `query:"minutes" min:"1" max:"1440" default:"60" doc:"window ending at the minute before the current one, in minutes; minutes not written yet count"`
	Exporter string `query:"exporter" doc:"only this exporter's flows (its IP address)"`
	Addr     string `query:"addr" doc:"only flows from or to this IP address"`
	Port     int    `query:"port" min:"1" max:"65535" doc:"only flows from or to this port"`
	Proto    int    `query:"proto" min:"1" max:"255" doc:"only this IP protocol number (6 TCP, 17 UDP, 1 ICMP, 58 ICMPv6)"`
}

// SeriesLine is one value of the dimension in GET /api/v1/flows/series.
type SeriesLine struct {
	// Key is the value: an address, a port or a protocol number as text.
	Key string `json:"key"`
	// Octets is the value's total over the window.
	Octets int64 `json:"octets"`
	// BitsPerSecond is the value's rate per minute, aligned with times.
	BitsPerSecond []float64 `json:"bits_per_second"`
}

// FlowSeriesOut is GET /api/v1/flows/series.
type FlowSeriesOut struct {
	By string `json:"by"`
	// Step is the width of a point, seconds (60).
	Step int `json:"step"`
	// Times are the minutes' starts, Unix seconds, oldest first: every
	// minute of the window, empty ones too.
	Times []int64 `json:"times"`
	// Series are the top values, octets descending.
	Series []SeriesLine `json:"series"`
	// Other is the rest per minute in bits/s: values below the top, and
	// the flows the store kept no address detail of.
	Other []float64 `json:"other"`
}

func bps(octets int64) float64 { return float64(octets) * 8 / 60 }

func (s *Server) flowSeries(c *gin.Context, in *flowSeriesIn) (FlowSeriesOut, error) {
	f, err := flowFilter(in.Exporter, in.Addr, in.Port, in.Proto)
	if err != nil {
		return FlowSeriesOut{}, err
	}
	// The window ends at the minute before the current one, so that its
	// last point is not the dip of a minute still going on; the open
	// minutes (not written yet: the previous minute until it closes, a
	// late exporter's older ones) count as written.
	to := time.Now().Unix()
	to = to - to%60 - 60
	from := to - int64(in.Minutes-1)*60
	var fs *store.FlowSeries
	err = s.withOpen(c, func(open []flowagg.Minute) error {
		var err error
		fs, err = s.deps.Flows.FlowSeries(c, from, to, in.By, in.Top, callerOf(c).SiteFilter(), f, open)
		return err
	})
	if err != nil {
		return FlowSeriesOut{}, err
	}
	out := FlowSeriesOut{By: in.By, Step: 60, Times: fs.Times, Series: []SeriesLine{}, Other: make([]float64, len(fs.Other))}
	for i, k := range fs.Keys {
		l := SeriesLine{Key: k, BitsPerSecond: make([]float64, len(fs.Times))}
		for j, o := range fs.Octets[i] {
			l.Octets += o
			l.BitsPerSecond[j] = bps(o)
		}
		out.Series = append(out.Series, l)
	}
	for j, o := range fs.Other {
		out.Other[j] = bps(o)
	}
	return out, nil
}

// flowExporters lists the exporters the collector has heard since the hub
// started. A site-bound caller sees none: the list is the collector's,
// which knows addresses, not the devices that put them in sites.
func (s *Server) flowExporters(c *gin.Context, _ *router.NoInput) ([]flows.ExporterStatus, error) {
	out := []flows.ExporterStatus{}
	if s.deps.FlowExporters == nil || callerOf(c).SiteFilter() != "" {
		return out, nil
	}
	return append(out, s.deps.FlowExporters.Exporters()...), nil
}
