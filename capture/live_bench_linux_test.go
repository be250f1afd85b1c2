package capture

import (
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// BenchmarkLivePipeline replays UDP frames with tcpreplay out of the host
// end of the veth pair while the capture component (AF_PACKET source and
// stats engine) counts them: first at top speed (the generator's ceiling),
// then at 50 000 packets/s. It reports frames sent and counted, kernel
// drops, and the process's CPU time per second of replay (100% = one
// core). Root and tcpreplay only: it runs in `make bench`.
func BenchmarkLivePipeline(b *testing.B) {
	tcpreplay, err := exec.LookPath("tcpreplay")
	if err != nil {
		b.Skip("tcpreplay not installed")
	}
	_, vh := liveVeth(b)
	ifi, err := net.InterfaceByName(vh)
	if err != nil {
		b.Fatal(err)
	}
	const frames = 200_000
	file := filepath.Join(b.TempDir(), "replay.pcap")
	writeUDPPcap(b, file, ifi.HardwareAddr, frames)
	for _, mode := range []struct {
		name string
		args []string
	}{
		{"topspeed", []string{"--topspeed"}},
		{"50kpps", []string{"--pps=50000", "--limit=100000"}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			for range b.N {
				c := New(slog.New(slog.DiscardHandler), DefaultConfig(), Deps{})
				if err := c.StartCapture(vh); err != nil {
					b.Fatal(err)
				}
				time.Sleep(100 * time.Millisecond)
				cpu0 := processCPU()
				args := append(append([]string{"-i", vh}, mode.args...), file)
				out, err := exec.Command(tcpreplay, args...).CombinedOutput()
				if err != nil {
					b.Fatalf("tcpreplay: %v\n%s", err, out)
				}
				m := regexp.MustCompile(`Actual: (\d+) packets \(\d+ bytes\) sent in ([0-9.]+) seconds`).FindSubmatch(out)
				if m == nil {
					b.Fatalf("tcpreplay output:\n%s", out)
				}
				sent, _ := strconv.Atoi(string(m[1]))
				secs, _ := strconv.ParseFloat(string(m[2]), 64)
				var counted int64
				deadline := time.Now().Add(5 * time.Second)
				for time.Now().Before(deadline) {
					counted = c.Snapshot().Protocols["UDP"]
					if counted >= int64(sent) {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				cpu := processCPU() - cpu0
				s := c.Snapshot()
				_ = c.StopCapture()
				b.ReportMetric(float64(sent), "sent")
				b.ReportMetric(float64(counted), "counted")
				b.ReportMetric(float64(s.Dropped), "kernel-drops")
				b.ReportMetric(float64(sent)/secs, "pps")
				b.ReportMetric(cpu.Seconds()/secs*100, "cpu%")
				if counted != int64(sent) {
					b.Errorf("counted %d of %d frames sent", counted, sent)
				}
			}
		})
	}
}

// writeUDPPcap writes n Ethernet/IPv4/UDP frames from the peer to the
// host end (dst MAC = the host end's) so the host stack takes them in.
func writeUDPPcap(b *testing.B, file string, dstMAC net.HardwareAddr, n int) {
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		b.Fatal(err)
	}
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, DstMAC: dstMAC, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.ParseIP(livePeerIP).To4(), DstIP: net.ParseIP(liveHostIP).To4()}
	udp := &layers.UDP{SrcPort: 40000, DstPort: 9}
	_ = udp.SetNetworkLayerForChecksum(ip)
	buf := gopacket.NewSerializeBuffer()
	payload := gopacket.Payload(make([]byte, 18))
	for i := range n {
		udp.SrcPort = layers.UDPPort(40000 + i%1000)
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, udp, payload); err != nil {
			b.Fatal(err)
		}
		data := buf.Bytes()
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: time.Unix(0, int64(i)*1000), CaptureLength: len(data), Length: len(data)}, data); err != nil {
			b.Fatal(err)
		}
	}
}

// processCPU is the user+system CPU time of this process.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
