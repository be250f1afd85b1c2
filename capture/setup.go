package capture

import (
	"net/netip"

	"netmon/capture/source"
)

// newEngine builds the stats engine of a capture that starts on src.
func newEngine(nets []netip.Prefix, src source.Source, deps Deps) *Engine {
	e := NewEngine(EngineConfig{LocalNets: nets, Now: deps.Now}, deps.Enrich)
	// The source opens only link types the engine decodes; should a new one
	// slip through, frames are still counted, just not decoded.
	_ = e.SetLinkType(src.LinkType())
	return e
}
