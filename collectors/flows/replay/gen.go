package replay

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// GenConfig describes a synthetic capture with many distinct
// conversations, the input of softflowd in the high-cardinality tests and
// benchmarks (issue 16): Tuples distinct 5-tuples (IPv4; every third UDP,
// the rest TCP), PacketsPer packets each, back to back 1 ms apart.
type GenConfig struct {
	Tuples     int
	PacketsPer int
	// Start is the capture's first minute (truncated to the minute);
	// the tuples are spread over Minutes minutes, each minute's between
	// its 2nd and 57th second, so that a flow's end never rounds into a
	// neighbouring minute.
	Start   time.Time
	Minutes int
	// Payload is the bytes after the transport header (at least 6: no
	// Ethernet padding, so IP length is what softflowd counts).
	Payload int
}

// Totals are the packets, IP bytes and flows of one (minute, protocol),
// as an exporter that sees each 5-tuple as one flow reports them; the
// minute is that of the flow's last packet.
type Totals struct {
	Packets, Octets, Flows int64
}

// TruthKey is a minute start (Unix seconds) and an IP protocol.
type TruthKey struct {
	Minute int64
	Proto  uint8
}

// GeneratePcap writes cfg's capture to path and returns its truth.
func GeneratePcap(path string, cfg GenConfig) (map[TruthKey]Totals, error) {
	if cfg.PacketsPer < 1 {
		cfg.PacketsPer = 1
	}
	if cfg.Minutes < 1 {
		cfg.Minutes = 1
	}
	cfg.Payload = max(cfg.Payload, 6)
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	truth, err := writeGen(bw, cfg)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("generate %s: %w", path, err)
	}
	return truth, nil
}

func writeGen(w io.Writer, cfg GenConfig) (map[TruthKey]Totals, error) {
	pw := pcapgo.NewWriter(w)
	if err := pw.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		return nil, err
	}
	truth := map[TruthKey]Totals{}
	start := cfg.Start.Truncate(time.Minute)
	perMinute := (cfg.Tuples + cfg.Minutes - 1) / cfg.Minutes
	step := 55 * time.Second / time.Duration(perMinute)
	payload := make([]byte, cfg.Payload)
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	for i := range cfg.Tuples {
		m, j := i/perMinute, i%perMinute
		first := start.Add(time.Duration(m)*time.Minute + 2*time.Second + time.Duration(j)*step)
		ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Id: uint16(i),
			SrcIP: net.IPv4(10, byte(i>>16), byte(i>>8), byte(i)).To4(),
			DstIP: net.IPv4(172, 16+byte(i%16), byte(i>>8), byte(i*7)).To4()}
		var l4 gopacket.SerializableLayer
		sport, dport := layers.TCPPort(1024+i%60000), layers.TCPPort([]uint16{443, 80, 22, 8080}[i%4])
		if i%3 == 0 {
			ip.Protocol = layers.IPProtocolUDP
			u := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: 53}
			_ = u.SetNetworkLayerForChecksum(ip)
			l4 = u
		} else {
			ip.Protocol = layers.IPProtocolTCP
			t := &layers.TCP{SrcPort: sport, DstPort: dport, ACK: true, PSH: true, Seq: uint32(i), Window: 1024}
			_ = t.SetNetworkLayerForChecksum(ip)
			l4 = t
		}
		var last time.Time
		var octets int64
		for p := range cfg.PacketsPer {
			if err := gopacket.SerializeLayers(buf, opts, eth, ip, l4, gopacket.Payload(payload)); err != nil {
				return nil, err
			}
			data := buf.Bytes()
			last = first.Add(time.Duration(p) * time.Millisecond)
			if err := pw.WritePacket(gopacket.CaptureInfo{Timestamp: last, CaptureLength: len(data), Length: len(data)}, data); err != nil {
				return nil, err
			}
			octets += int64(len(data) - 14)
		}
		k := TruthKey{Minute: last.Unix() - last.Unix()%60, Proto: uint8(ip.Protocol)}
		t := truth[k]
		t.Packets += int64(cfg.PacketsPer)
		t.Octets += octets
		t.Flows++
		truth[k] = t
	}
	return truth, nil
}

// Softflowd exports pcap with softflowd (NetFlow version "5", "9" or
// "10", the PEERS.md command) and returns the datagrams it sent, received
// on a loopback socket with a large buffer, and softflowd's output. dir
// holds its pid file.
func Softflowd(bin, pcap, version, dir string) ([]Datagram, string, error) {
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, "", err
	}
	defer conn.Close()
	_ = conn.SetReadBuffer(64 << 20)
	var ds []Datagram
	stop := make(chan struct{})
	got := make(chan struct{})
	go func() {
		defer close(got)
		buf := make([]byte, 65535)
		exited := false
		for {
			select {
			case <-stop:
				exited = true
			default:
			}
			_ = conn.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			n, err := conn.Read(buf)
			if err != nil {
				if exited {
					return
				}
				continue
			}
			d := append([]byte(nil), buf[:n]...)
			ds = append(ds, Datagram{Data: d, Flows: countFlows(d)})
		}
	}()
	cmd := exec.Command(bin, "-D", "-r", pcap, "-n", conn.LocalAddr().String(), "-v", version,
		"-m", "65536", "-p", filepath.Join(dir, "softflowd.pid"), "-c", "none")
	out, err := cmd.CombinedOutput()
	close(stop)
	<-got
	if err != nil {
		return nil, string(out), fmt.Errorf("softflowd: %w", err)
	}
	return ds, string(out), nil
}

// WriteExport saves datagrams as a pcap of UDP packets to port on
// loopback, readable by Load, tshark and tcpreplay.
func WriteExport(path string, ds []Datagram, port int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	pw := pcapgo.NewWriter(bw)
	err = pw.WriteFileHeader(65535, layers.LinkTypeEthernet)
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IPv4(127, 0, 0, 1).To4(), DstIP: net.IPv4(127, 0, 0, 1).To4()}
	udp := &layers.UDP{SrcPort: 40000, DstPort: layers.UDPPort(port)}
	_ = udp.SetNetworkLayerForChecksum(ip)
	now := time.Now()
	for i, d := range ds {
		if err != nil {
			break
		}
		if err = gopacket.SerializeLayers(buf, opts, eth, ip, udp, gopacket.Payload(d.Data)); err != nil {
			break
		}
		data := buf.Bytes()
		err = pw.WritePacket(gopacket.CaptureInfo{Timestamp: now.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(data), Length: len(data)}, data)
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
