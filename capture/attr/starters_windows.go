package attr

var platformStarters = starters{pcap: errPcapWindows, etw: startETW}
