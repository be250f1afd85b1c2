package proc

import (
	"context"
	"time"

	"netmon/store/record"
)

// Inventories is the hub host's established connections as the alert
// engine's inventory rules read them (agent 0), read again every cycle
// through a 5 s cache: each read is a new observation.
func (l *Lister) Inventories(ctx context.Context) ([]record.Inventory, error) {
	cs, err := l.Cached(ctx, 5*time.Second)
	if err != nil {
		// The host's part is left out; the agents' (the fleet's) are
		// still evaluated.
		return nil, nil
	}
	inv := record.Inventory{}
	for _, c := range cs {
		inv.Conns = record.AppendEstablished(inv.Conns, c.RemoteAddr, c.Status, c.Process, 0, "")
	}
	return []record.Inventory{inv}, nil
}
