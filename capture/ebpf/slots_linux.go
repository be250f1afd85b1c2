package ebpf

import (
	"errors"
	"fmt"

	cebpf "github.com/cilium/ebpf"
)

// slots is the number of entries of the counts and slot_descs arrays
// (SLOTS in attr.bpf.c).
const slots = 16384

// slotState is what Read remembers of one slot in use.
type slotState struct {
	gen  uint32
	flow Flow
	c    Counters
	idle int
	// freeing: the generation was raised at the previous read (no
	// socket adds to the slot any more); this read takes its last
	// counts and returns it.
	freeing bool
}

// fillFreeSlots queues every slot index for the programs (at Start).
func (a *Accountant) fillFreeSlots() error {
	a.slots = make(map[uint32]*slotState)
	for i := uint32(0); i < slots; i++ {
		if err := a.objs.FreeSlots.Update(nil, i, cebpf.UpdateAny); err != nil {
			return fmt.Errorf("ebpf: filling the free slots: %w", err)
		}
	}
	return nil
}

// readSlots appends the slots' flows to d and frees slots idle for
// idleReads reads, in two steps (see attr.bpf.c).
func (a *Accountant) readSlots(d *Delta) error {
	descs, err := lookupAll[attrSlotDesc](a.objs.SlotDescs)
	if err != nil {
		return fmt.Errorf("ebpf: reading the slot descriptions: %w", err)
	}
	cnts, err := lookupAll[attrSlotCnt](a.objs.Counts)
	if err != nil {
		return fmt.Errorf("ebpf: reading the slot counts: %w", err)
	}
	for i := range descs {
		idx := uint32(i)
		desc := &descs[i]
		s := a.slots[idx]
		if s == nil {
			if desc.Used == 0 {
				continue
			}
			s = &slotState{gen: desc.Gen, flow: flowOf(desc.Key.Pid, &desc.V)}
			a.slots[idx] = s
		}
		v := cnts[i]
		c := Counters{BytesIn: v.BytesIn, BytesOut: v.BytesOut, CallsIn: v.CallsIn, CallsOut: v.CallsOut}
		delta := c.sub(s.c)
		s.c = c
		if !delta.Zero() {
			s.idle = 0
			f := s.flow
			f.Counters = delta
			d.Flows = append(d.Flows, f)
		} else {
			s.idle++
		}
		switch {
		case s.freeing:
			if err := a.objs.Counts.Update(idx, attrSlotCnt{}, cebpf.UpdateExist); err != nil {
				return fmt.Errorf("ebpf: zeroing slot %d: %w", idx, err)
			}
			if err := a.objs.FreeSlots.Update(nil, idx, cebpf.UpdateAny); err != nil {
				return fmt.Errorf("ebpf: freeing slot %d: %w", idx, err)
			}
			delete(a.slots, idx)
		case s.idle >= idleReads:
			nd := *desc
			nd.Gen, nd.Used = s.gen+1, 0
			if err := a.objs.SlotDescs.Update(idx, nd, cebpf.UpdateExist); err != nil {
				return fmt.Errorf("ebpf: retiring slot %d: %w", idx, err)
			}
			s.freeing = true
		}
	}
	return nil
}

// lookupAll reads a whole array map with batch lookups.
func lookupAll[V any](m *cebpf.Map) ([]V, error) {
	keys := make([]uint32, slots)
	vals := make([]V, slots)
	var cursor cebpf.MapBatchCursor
	n := 0
	for n < slots {
		got, err := m.BatchLookup(&cursor, keys[n:], vals[n:], nil)
		n += got
		if errors.Is(err, cebpf.ErrKeyNotExist) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if n != slots {
		return nil, fmt.Errorf("batch lookup returned %d of %d entries", n, slots)
	}
	return vals, nil
}
