package ebpf

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// mySlots counts the slots in use by this process (by the kernel's
// descriptions), and the ones Read remembers.
func mySlots(t *testing.T, a *Accountant) (kernel, remembered int) {
	t.Helper()
	descs := make([]attrSlotDesc, slots)
	if err := readArray(a.objs.SlotDescs, descs); err != nil {
		t.Fatal(err)
	}
	for _, d := range descs {
		if d.Used == 1 && d.Key.Pid == uint32(os.Getpid()) {
			kernel++
		}
	}
	for _, s := range a.slots {
		if s.flow.PID == int32(os.Getpid()) {
			remembered++
		}
	}
	return kernel, remembered
}

func read(t *testing.T, a *Accountant) Delta {
	t.Helper()
	d, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A closed socket's slot is retired after idleReads quiet reads and
// returned one read later, its bytes reported before; the free queue is
// whole again. A socket still open whose slot was freed while it was
// idle gets a new slot on its next call, and not a byte is lost.
func TestIdleSlotsFreed(t *testing.T) {
	a := start(t)
	srv, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := net.Dial("udp4", srv.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(make([]byte, 77)); err != nil {
		t.Fatal(err)
	}
	closed, err := net.Dial("udp4", srv.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := closed.Write(make([]byte, 55)); err != nil {
		t.Fatal(err)
	}
	local, closedLocal, remote := c.LocalAddr().String(), closed.LocalAddr().String(), srv.LocalAddr().String()
	closed.Close()
	d := read(t, a)
	if got, gotClosed := sumFor(d, 17, local, remote), sumFor(d, 17, closedLocal, remote); got.BytesOut != 77 || gotClosed.BytesOut != 55 {
		t.Fatalf("first read %+v and %+v", got, gotClosed)
	}
	if k, r := mySlots(t, a); k != 2 || r != 2 {
		t.Fatalf("after the first read: %d slots in the kernel, %d remembered, want 2 and 2", k, r)
	}
	for range idleReads {
		read(t, a)
	}
	if k, r := mySlots(t, a); k != 0 || r != 2 {
		t.Fatalf("after %d idle reads: %d slots in use, %d remembered, want 0 (retired) and 2", idleReads, k, r)
	}
	read(t, a)
	if k, r := mySlots(t, a); k != 0 || r != 0 {
		t.Fatalf("one read after retiring: %d slots, %d remembered", k, r)
	}
	// The open socket's storage still names its old slot: the next
	// send takes the slow path and a new slot, counted exactly.
	for range 3 {
		if _, err := c.Write(make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if got := sumFor(read(t, a), 17, local, remote); got != (Counters{BytesOut: 300, CallsOut: 3}) {
		t.Fatalf("after the slot was freed: %+v, want 300 bytes in 3 calls", got)
	}
	if k, _ := mySlots(t, a); k != 1 {
		t.Fatalf("%d slots for the reused socket, want 1", k)
	}
}

// A socket inherited by a child process: the child's sends are the
// child's (through the hash), the owner's stay the owner's (its slot).
// Owner and child run on the same CPU, so the child meets the owner's
// entry in that CPU's cache and must miss it (another task's stack);
// the child's exit is counted.
func TestSharedSocketAttributed(t *testing.T) {
	a := start(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var was, cpu0 unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		t.Fatal(err)
	}
	cpu0.Set(0)
	if err := unix.SchedSetaffinity(0, &cpu0); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = unix.SchedSetaffinity(0, &was) }()
	if _, err := exec.LookPath("/usr/bin/python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 must be installed in CI")
		}
		t.Skip("no python3")
	}
	srv, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := net.DialUDP("udp4", nil, srv.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	f, err := c.File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	exits0 := taskExits(t, a)
	child := exec.Command("/usr/bin/python3", "-c", "import os, socket\nos.sched_setaffinity(0, {0})\ns=socket.socket(fileno=3)\nfor _ in range(4): s.send(b'c'*250)")
	child.ExtraFiles = []*os.File{f}
	if out, err := child.CombinedOutput(); err != nil {
		t.Fatalf("child: %v %s", err, out)
	}
	if _, err := c.Write(make([]byte, 20)); err != nil {
		t.Fatal(err)
	}
	if n := taskExits(t, a) - exits0; n < 1 {
		t.Errorf("task exits counted while the child ran: %d, want at least its own", n)
	}
	d := read(t, a)
	local, remote := c.LocalAddr().String(), srv.LocalAddr().String()
	if got := sumFor(d, 17, local, remote); got != (Counters{BytesOut: 30, CallsOut: 2}) {
		t.Errorf("owner %+v, want 30 bytes in 2 calls", got)
	}
	var kid Counters
	for _, fl := range d.Flows {
		if fl.PID == int32(child.Process.Pid) {
			if fl.Comm != "python3" || fl.Local.String() != local || fl.Remote.String() != remote {
				t.Errorf("child flow %+v", fl)
			}
			kid.BytesOut += fl.BytesOut
			kid.CallsOut += fl.CallsOut
		}
	}
	if kid != (Counters{BytesOut: 1000, CallsOut: 4}) {
		t.Errorf("child pid %d: %+v, want 1000 bytes in 4 calls; flows %s", child.Process.Pid, kid, fmt.Sprint(d.Flows))
	}
}

// BenchmarkRead is one Read of the kernel's maps (both slot arrays whole,
// and the hash), as the agent does every interval.
func BenchmarkRead(b *testing.B) {
	a := start(b)
	for b.Loop() {
		if _, err := a.Read(); err != nil {
			b.Fatal(err)
		}
	}
}

// taskExits is the programs' count of task exits.
func taskExits(t *testing.T, a *Accountant) uint64 {
	t.Helper()
	var v uint64
	if err := a.objs.TaskExits.Lookup(uint32(0), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
