package hub

import (
	"netmon/collectors/geo/threat"
)

// buildThreat builds the watches of the threat list and the domain
// categories; the alert engine's ioc rule and the enrich/threatintel
// routes read their current loads.
func (h *Hub) buildThreat() {
	log := h.log.With("component", "threat")
	h.iocList = threat.NewWatch(log, "ioc", h.cfg.Threat.IOCFile, h.cfg.Threat.Poll, threat.LoadList, h.reg)
	h.categories = threat.NewWatch(log, "category", h.cfg.Threat.CategoryFile, h.cfg.Threat.Poll, threat.LoadCategories, h.reg)
	h.parts.add("ioc-list", h.iocList.Start, noCtx(h.iocList.Stop))
	h.parts.add("domain-categories", h.categories.Start, noCtx(h.categories.Stop))
}
