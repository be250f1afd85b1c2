package pcaprec

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// testFrame is a frame to record and what reading it back must give.
type testFrame struct {
	Data []byte
	CI   gopacket.CaptureInfo
}

// makeFrames builds n valid Ethernet/IPv4/UDP frames with payloads of
// varying size, so tcpdump and tshark decode them without complaint.
func makeFrames(t *testing.T, n int) []testFrame {
	t.Helper()
	eth := &layers.Ethernet{
		SrcMAC:       net.HardwareAddr{0x02, 0, 0, 0, 0, 1},
		DstMAC:       net.HardwareAddr{0x02, 0, 0, 0, 0, 2},
		EthernetType: layers.EthernetTypeIPv4,
	}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP,
		SrcIP: net.IPv4(10, 0, 0, 1), DstIP: net.IPv4(10, 0, 0, 2)}
	udp := &layers.UDP{SrcPort: 40000, DstPort: 53000}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	base := time.Date(2024, 3, 5, 6, 7, 8, 0, time.UTC)
	frames := make([]testFrame, n)
	for i := range frames {
		buf := gopacket.NewSerializeBuffer()
		payload := make([]byte, 10+(i*7)%300)
		payload[0] = byte(i)
		ip.Id = uint16(i)
		if err := gopacket.SerializeLayers(buf, opts, eth, ip, udp, gopacket.Payload(payload)); err != nil {
			t.Fatal(err)
		}
		data := buf.Bytes()
		frames[i] = testFrame{data, gopacket.CaptureInfo{
			Timestamp:     base.Add(time.Duration(i) * 1500 * time.Microsecond),
			CaptureLength: len(data), Length: len(data)}}
	}
	return frames
}

// fixedNow returns a clock stuck at a local time.
func fixedNow() func() time.Time {
	t := time.Date(2024, 3, 5, 6, 7, 8, 0, time.Local)
	return func() time.Time { return t }
}

// readBack reads a pcap file with pcapgo.
func readBack(t *testing.T, file string) (layers.LinkType, []testFrame) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []testFrame
	for {
		data, ci, err := rd.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return rd.LinkType(), out
		}
		if err != nil {
			t.Fatalf("read %s: %v", file, err)
		}
		out = append(out, testFrame{data, ci})
	}
}

// toolCount counts the frames of a file with tcpdump (and with tshark too,
// when asked and installed: a second, slower opinion), or returns -1 when
// tcpdump is missing outside CI.
func toolCount(t *testing.T, file string, alsoTshark bool) int {
	t.Helper()
	if _, err := exec.LookPath("tcpdump"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tcpdump must be installed under CI")
		}
		t.Log("tcpdump is not installed: the files were not cross-checked (CI=true makes this a failure)")
		return -1
	}
	out, err := exec.Command("tcpdump", "-r", file, "-q", "-n").Output()
	if err != nil {
		t.Fatalf("tcpdump -r %s: %v", file, err)
	}
	n := strings.Count(string(out), "\n")
	if _, err := exec.LookPath("tshark"); err == nil && alsoTshark {
		out, err := exec.Command("tshark", "-r", file, "-T", "fields", "-e", "frame.number").Output()
		if err != nil {
			t.Fatalf("tshark -r %s: %v", file, err)
		}
		if m := strings.Count(string(out), "\n"); m != n {
			t.Errorf("%s: tshark counts %d frames, tcpdump %d", file, m, n)
		}
	}
	return n
}

// microseconds is what classic pcap keeps of a timestamp.
func microseconds(fs []testFrame) []testFrame {
	out := make([]testFrame, len(fs))
	for i, f := range fs {
		f.CI.Timestamp = f.CI.Timestamp.Truncate(time.Microsecond)
		out[i] = f
	}
	return out
}

// frameCmp compares frames by data, lengths and instant.
var frameCmp = cmp.Comparer(func(a, b gopacket.CaptureInfo) bool {
	return a.Timestamp.Equal(b.Timestamp) && a.CaptureLength == b.CaptureLength && a.Length == b.Length
})

func TestRecordReadBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "captures") // created by Start
	r := New(Config{Dir: dir})
	r.now = fixedNow()
	name, err := r.Start("eth0", layers.LinkTypeEthernet, 65535)
	if err != nil {
		t.Fatal(err)
	}
	if want := "2024-03-05_06-07-08_eth0.pcap"; name != want {
		t.Fatalf("file = %q, want %q", name, want)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o750 {
		t.Fatalf("record dir: %v, %v; want mode 0750", fi, err)
	}
	const n = 1000
	frames := makeFrames(t, n)
	wantBytes := int64(24)
	for _, f := range frames {
		if err := r.Write(f.Data, f.CI); err != nil {
			t.Fatal(err)
		}
		wantBytes += 16 + int64(len(f.Data))
	}
	want := Status{Recording: true, File: name, Packets: n, Bytes: wantBytes}
	if diff := cmp.Diff(r.Status(), want); diff != "" {
		t.Fatalf("Status (-got, +want):\n%s", diff)
	}
	sum, err := r.Stop()
	if err != nil {
		t.Fatal(err)
	}
	want = Status{File: name, Packets: n, Bytes: wantBytes}
	if diff := cmp.Diff(sum, want); diff != "" {
		t.Fatalf("Stop (-got, +want):\n%s", diff)
	}
	if diff := cmp.Diff(r.Status(), want); diff != "" {
		t.Fatalf("Status after Stop (-got, +want):\n%s", diff)
	}
	resp := StopResponse{OK: true, File: name, Packets: n, Bytes: wantBytes}
	if diff := cmp.Diff(sum.StopResponse(), resp); diff != "" {
		t.Fatalf("StopResponse (-got, +want):\n%s", diff)
	}
	file := filepath.Join(dir, name)
	if fi, err := os.Stat(file); err != nil || fi.Size() != wantBytes {
		t.Fatalf("file size: %v, %v; want %d", fi, err, wantBytes)
	}
	lt, got := readBack(t, file)
	if lt != layers.LinkTypeEthernet {
		t.Errorf("link type %v", lt)
	}
	if diff := cmp.Diff(got, microseconds(frames), frameCmp); diff != "" {
		t.Fatalf("frames read back (-got, +want):\n%s", diff)
	}
	if c := toolCount(t, file, true); c != -1 && c != n {
		t.Fatalf("tcpdump counts %d frames, want %d", c, n)
	}
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	const maxBytes = 8000
	r := New(Config{Dir: dir, MaxBytes: maxBytes})
	r.now = fixedNow()
	if _, err := r.Start("veth0", layers.LinkTypeEthernet, 0); err != nil {
		t.Fatal(err)
	}
	const n = 500
	frames := makeFrames(t, n)
	for _, f := range frames {
		if err := r.Write(f.Data, f.CI); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := r.Stop()
	if err != nil {
		t.Fatal(err)
	}
	// Every file was started in the same (fixed) second: -1, -2, ...
	var names []string
	var got []testFrame
	var size int64
	total := 0
	for i := 0; ; i++ {
		name := "2024-03-05_06-07-08_veth0.pcap"
		if i > 0 {
			name = strings.Replace(name, ".pcap", "-"+strconv.Itoa(i)+".pcap", 1)
		}
		file := filepath.Join(dir, name)
		fi, err := os.Stat(file)
		if err != nil {
			break
		}
		names = append(names, name)
		if fi.Size() > maxBytes {
			t.Errorf("%s is %d bytes, more than MaxBytes %d", name, fi.Size(), maxBytes)
		}
		size += fi.Size()
		_, fr := readBack(t, file)
		got = append(got, fr...)
		if c := toolCount(t, file, false); c != -1 {
			if c != len(fr) {
				t.Errorf("%s: tcpdump counts %d, pcapgo %d", name, c, len(fr))
			}
			total += c
		}
	}
	if len(names) < 3 {
		t.Fatalf("only %d files: %v", len(names), names)
	}
	if diff := cmp.Diff(got, microseconds(frames), frameCmp); diff != "" {
		t.Fatalf("frames across files (-got, +want):\n%s", diff)
	}
	if total != 0 && total != n {
		t.Fatalf("tcpdump counts %d frames over %d files, want %d", total, len(names), n)
	}
	want := StopResponse{OK: true, File: names[len(names)-1], Packets: n, Bytes: size}
	if diff := cmp.Diff(sum.StopResponse(), want); diff != "" {
		t.Fatalf("Stop (-got, +want):\n%s", diff)
	}
	files, err := r.Files()
	if err != nil || len(files) != len(names) {
		t.Fatalf("Files() = %v, %v; want %d files", files, err, len(names))
	}
	t.Logf("%d files for %d frames", len(names), n)
}

func TestFileNames(t *testing.T) {
	shape := regexp.MustCompile(`^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}_[A-Za-z0-9._-]+\.pcap$`)
	for _, tc := range []struct{ desc, device, want string }{
		{"plain", "eth0", "eth0"},
		{"windows npcap name", `\Device\NPF_{4A1B-77}`, "_Device_NPF__4A1B-77_"},
		{"spaces and parens", "Wi-Fi (2)", "Wi-Fi__2_"},
		{"traversal", "../../etc", ".._.._etc"},
		{"empty", "", "capture"},
		{"unicode", "ağ0", "a__0"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			dir := t.TempDir()
			r := New(Config{Dir: dir})
			name, err := r.Start(tc.device, layers.LinkTypeEthernet, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Stop(); err != nil {
				t.Fatal(err)
			}
			if !shape.MatchString(name) || !strings.HasSuffix(name, "_"+tc.want+".pcap") {
				t.Fatalf("name %q, want the shape <YYYY-MM-DD_HH-MM-SS>_%s.pcap", name, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Fatalf("file not in Dir: %v", err)
			}
			stamp, err := time.ParseInLocation("2006-01-02_15-04-05", name[:19], time.Local)
			if d := time.Since(stamp); err != nil || d < -time.Second || d > time.Minute {
				t.Errorf("name %q does not start with the local time now: %v, %v", name, stamp, err)
			}
		})
	}
}

func TestStartStopStates(t *testing.T) {
	dir := t.TempDir()
	r := New(Config{Dir: dir})
	r.now = fixedNow()
	if _, err := r.Stop(); !errors.Is(err, ErrNotRecording) {
		t.Fatalf("Stop while idle = %v, want ErrNotRecording", err)
	}
	f := makeFrames(t, 1)[0]
	if err := r.Write(f.Data, f.CI); err != nil {
		t.Fatalf("Write while idle = %v, want nil (no-op)", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("idle Write created files: %v", entries)
	}
	first, err := r.Start("lo", layers.LinkTypeEthernet, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Start("lo", layers.LinkTypeEthernet, 0); !errors.Is(err, ErrAlreadyRecording) {
		t.Fatalf("second Start = %v, want ErrAlreadyRecording", err)
	}
	if _, err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	// Same second again: a new file, never the old one overwritten.
	second, err := r.Start("lo", layers.LinkTypeEthernet, 0)
	if err != nil {
		t.Fatal(err)
	}
	if second == first || second != "2024-03-05_06-07-08_lo-1.pcap" {
		t.Fatalf("second recording file %q (first %q)", second, first)
	}
	if st := r.Status(); !st.Recording || st.Packets != 0 || st.Bytes != 24 {
		t.Fatalf("Status of a fresh recording = %+v", st)
	}
}

func TestSnaplenTruncates(t *testing.T) {
	dir := t.TempDir()
	r := New(Config{Dir: dir})
	name, err := r.Start("eth0", layers.LinkTypeEthernet, 64)
	if err != nil {
		t.Fatal(err)
	}
	f := makeFrames(t, 30)[29] // 10+29*7 = 213 bytes of payload
	if err := r.Write(f.Data, f.CI); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	_, got := readBack(t, filepath.Join(dir, name))
	if len(got) != 1 || got[0].CI.CaptureLength != 64 || got[0].CI.Length != len(f.Data) {
		t.Fatalf("read back %+v, want caplen 64 and len %d", got, len(f.Data))
	}
}

// TestConcurrentUse runs Write on one goroutine and the HTTP-side calls on
// others; run with -race.
func TestConcurrentUse(t *testing.T) {
	dir := t.TempDir()
	r := New(Config{Dir: dir, MaxBytes: 20000})
	if _, err := r.Start("eth0", layers.LinkTypeEthernet, 0); err != nil {
		t.Fatal(err)
	}
	frames := makeFrames(t, 300)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			for _, f := range frames {
				if err := r.Write(f.Data, f.CI); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = r.Status()
			files, err := r.Files()
			if err != nil {
				t.Error(err)
				return
			}
			for _, fe := range files {
				if f, _, err := r.Open(fe.Name); err == nil {
					_ = f.Close()
				}
			}
		}
	}()
	time.Sleep(50 * time.Millisecond)
	sum, err := r.Stop()
	close(stop)
	wg.Wait()
	if err != nil || sum.Recording || sum.Error != "" {
		t.Fatalf("Stop = %+v, %v", sum, err)
	}
	if st := r.Status(); st.Packets != sum.Packets || st.Recording {
		t.Fatalf("Status %+v after Stop %+v", st, sum)
	}
}
