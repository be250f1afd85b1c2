package attr

// Linux specifics of the pcap backend (pcap_unix.go).
const (
	notePcapDenied  = "pcap: needs CAP_NET_RAW or root"
	pcapRunningNote = ""
)

// newSockTable reads sock_diag and /proc (sockets_linux.go).
func newSockTable() sockTable { return newProcSockets() }
