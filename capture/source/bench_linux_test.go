package source

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"golang.org/x/sys/unix"
)

const (
	replayFrames = 200_000
	replayPort   = 47000
)

// BenchmarkLiveReplay replays 200 000 small UDP frames with
// `tcpreplay --topspeed` out of the host end of a veth pair while a Source
// reads that end, and reports frames sent (tcpreplay's count), frames read,
// kernel drops and the reader thread's CPU time. It runs in `make bench`
// only, as root, with tcpreplay installed. The generator is the ceiling here
// (PEERS.md: about 300 000 frames/s while a capture runs).
func BenchmarkLiveReplay(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	tcpreplay, err := exec.LookPath("tcpreplay")
	if err != nil {
		b.Skip("tcpreplay not installed")
	}
	p := newVethPair(b)
	file := writeReplayPcap(b, p, replayFrames)
	var sent, got, drops, cpu, replay float64
	for i := 0; i < b.N; i++ {
		r := replayOnce(b, tcpreplay, p, file)
		sent += float64(r.sent)
		got += float64(r.got)
		drops += float64(r.drops)
		cpu += r.cpu.Seconds()
		replay += r.replay.Seconds()
	}
	n := float64(b.N)
	b.ReportMetric(sent/n, "sent/op")
	b.ReportMetric(got/n, "received/op")
	b.ReportMetric(drops/n, "kernel-drops/op")
	b.ReportMetric(cpu/n*1000, "reader-cpu-ms/op")
	b.ReportMetric(sent/replay, "sent/s")
	b.ReportMetric(cpu/got*1e9, "reader-cpu-ns/frame")
	if got != sent {
		b.Errorf("received %v frames of %v sent", got, sent)
	}
}

type replayResult struct {
	sent, got, drops int
	cpu, replay      time.Duration // reader CPU; tcpreplay's sending time
}

var tcpreplayActual = regexp.MustCompile(`Actual: (\d+) packets \(\d+ bytes\) sent in ([0-9.]+) seconds`)

// replayOnce opens a Source, runs tcpreplay and reads until the link is
// quiet. The reader is locked to its OS thread so RUSAGE_THREAD measures
// exactly its CPU time.
func replayOnce(b *testing.B, tcpreplay string, p *vethPair, file string) replayResult {
	src, err := Open(p.Host, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	type readerOut struct {
		got int
		cpu time.Duration
	}
	started, quiet := make(chan struct{}), make(chan struct{})
	done := make(chan readerOut)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cpu0 := threadCPU()
		close(started)
		got, last := 0, time.Now()
		for {
			data, _, err := src.ReadPacketData()
			if errors.Is(err, ErrTimeout) {
				select {
				case <-quiet:
					if time.Since(last) > 300*time.Millisecond {
						done <- readerOut{got, threadCPU() - cpu0}
						return
					}
				default:
				}
				continue
			}
			if err != nil {
				b.Error(err)
				done <- readerOut{got, threadCPU() - cpu0}
				return
			}
			last = time.Now()
			// Ethernet/IPv4/UDP to our port: a fixed-offset check, so the
			// CPU measured is the Source's rather than a decoder's.
			if len(data) >= 38 && data[12] == 0x08 && data[13] == 0x00 && data[23] == 17 &&
				binary.BigEndian.Uint16(data[36:38]) == replayPort {
				got++
			}
		}
	}()
	<-started
	out, err := exec.Command(tcpreplay, "-i", p.Host, "--topspeed", file).CombinedOutput()
	close(quiet)
	if err != nil {
		b.Fatalf("tcpreplay: %v\n%s", err, out)
	}
	r := <-done
	m := tcpreplayActual.FindSubmatch(out)
	if m == nil {
		b.Fatalf("no packet count in tcpreplay output:\n%s", out)
	}
	sent, _ := strconv.Atoi(string(m[1]))
	secs, _ := strconv.ParseFloat(string(m[2]), 64)
	b.Logf("tcpreplay: %s", m[0])
	st, err := src.Stats()
	if err != nil {
		b.Fatal(err)
	}
	return replayResult{sent: sent, got: r.got, drops: int(st.Dropped), cpu: r.cpu,
		replay: time.Duration(secs * float64(time.Second))}
}

// threadCPU is the user+system CPU time of the calling OS thread.
func threadCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeReplayPcap writes n 60-byte Ethernet/IPv4/UDP frames from the host
// end to the namespace end (its MAC and IP, so the peer accepts them), with
// varying source ports, into a pcap in b.TempDir().
func writeReplayPcap(b *testing.B, p *vethPair, n int) string {
	b.Helper()
	file := filepath.Join(b.TempDir(), "replay.pcap")
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		b.Fatal(err)
	}
	eth := &layers.Ethernet{SrcMAC: p.HostMAC, DstMAC: p.PeerMAC, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: p.HostIP.AsSlice(), DstIP: p.PeerIP.AsSlice()}
	udp := &layers.UDP{DstPort: replayPort}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 18) // 14+20+8+18 = 60 bytes, the Ethernet minimum
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	ts := time.Unix(1_700_000_000, 0)
	for i := range n {
		udp.SrcPort = layers.UDPPort(10000 + i%50000)
		ip.Id = uint16(i)
		binary.BigEndian.PutUint32(payload, uint32(i))
		if err := gopacket.SerializeLayers(buf, opts, eth, ip, udp, gopacket.Payload(payload)); err != nil {
			b.Fatal(err)
		}
		data := buf.Bytes()
		ci := gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Microsecond),
			CaptureLength: len(data), Length: len(data)}
		if err := w.WritePacket(ci, data); err != nil {
			b.Fatal(err)
		}
	}
	return file
}
