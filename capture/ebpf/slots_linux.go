package ebpf

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	cebpf "github.com/cilium/ebpf"
)

// slots is the number of entries of the counts and slot_descs arrays
// (SLOTS in attr.bpf.c).
const slots = 16384

// slotState is what Read remembers of one slot in use.
type slotState struct {
	gen  uint64
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
	if a.descs == nil {
		// Kept between reads: 2 MB that would be garbage every second.
		a.descs, a.cnts = make([]attrSlotDesc, slots), make([]attrSlotCnt, slots)
	}
	descs, cnts := a.descs, a.cnts
	if err := readArray(a.objs.SlotDescs, descs); err != nil {
		return fmt.Errorf("ebpf: reading the slot descriptions: %w", err)
	}
	if err := readArray(a.objs.Counts, cnts); err != nil {
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
			// The copy above may have met the programs writing this
			// description (they set used last, but the copy's order
			// is memmove's); a second read, a copy later, cannot.
			if err := a.objs.SlotDescs.Lookup(idx, desc); err != nil {
				return fmt.Errorf("ebpf: reading slot %d: %w", idx, err)
			}
			s = &slotState{gen: cnts[i].Gen, flow: flowOf(desc.Key.Pid, &desc.V)}
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
			if err := a.objs.Counts.Update(idx, attrSlotCnt{Gen: s.gen + 1}, cebpf.UpdateExist); err != nil {
				return fmt.Errorf("ebpf: zeroing slot %d: %w", idx, err)
			}
			if err := a.objs.FreeSlots.Update(nil, idx, cebpf.UpdateAny); err != nil {
				return fmt.Errorf("ebpf: freeing slot %d: %w", idx, err)
			}
			delete(a.slots, idx)
		case s.idle >= idleReads:
			if err := a.retire(idx, s.gen+1); err != nil {
				return fmt.Errorf("ebpf: retiring slot %d: %w", idx, err)
			}
			nd := *desc
			nd.Used = 0
			if err := a.objs.SlotDescs.Update(idx, nd, cebpf.UpdateExist); err != nil {
				return fmt.Errorf("ebpf: retiring slot %d: %w", idx, err)
			}
			s.freeing = true
		}
	}
	return nil
}

// retire stores the slot's new generation, one aligned 8-byte word of
// the mapped counts (the programs may be adding to the counters next to
// it: an Update of the whole value would overwrite their adds).
func (a *Accountant) retire(idx uint32, gen uint64) error {
	mem, err := a.objs.Counts.Memory()
	if err != nil {
		return err
	}
	var w [8]byte
	binary.NativeEndian.PutUint64(w[:], gen)
	_, err = mem.WriteAt(w[:], int64(idx)*int64(unsafe.Sizeof(attrSlotCnt{})))
	return err
}

// readArray copies a whole memory-mapped array map of slots entries
// into vals (structs laid out as in C, 8-byte multiples: the kernel's
// element stride). Each counter is an aligned 8-byte word, read whole.
func readArray[V any](m *cebpf.Map, vals []V) error {
	mem, err := m.Memory()
	if err != nil {
		return err
	}
	size := int(unsafe.Sizeof(vals[0]))
	if size%8 != 0 || int(m.ValueSize()) != size || mem.Size() < size*len(vals) {
		return fmt.Errorf("map %s: value size %d, mapping %d bytes, Go type %d bytes", m, m.ValueSize(), mem.Size(), size)
	}
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&vals[0])), size*len(vals))
	_, err = mem.ReadAt(buf, 0)
	return err
}
