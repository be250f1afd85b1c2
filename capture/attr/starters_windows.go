package attr

var platformStarters = starters{pcap: startPcap, etw: startETW}
