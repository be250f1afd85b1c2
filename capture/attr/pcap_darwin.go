package attr

// macOS specifics of the pcap backend (pcap_unix.go): frames come from
// /dev/bpf* in pure Go (capture/source, gopacket's bsdbpf), but no
// socket table: macOS exposes socket owners only through libproc
// (proc_pidinfo), which needs cgo. Every flow is attributed to
// "(unattributed)" with that reason; the flow table still extracts TLS
// SNI, HTTP Host and DNS names.
const (
	notePcapDenied  = notePcapDarwinDenied
	pcapRunningNote = noteDarwinNoPIDs
)

func newSockTable() sockTable { return noSockets{} }
