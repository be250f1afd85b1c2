package attr

var platformStarters = starters{ebpf: startEBPF, pcap: startPcap}
