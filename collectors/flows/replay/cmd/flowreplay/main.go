// Command flowreplay sends the flow-export datagrams of a pcap to a
// collector at a fixed rate and prints how many datagrams and flows it
// sent: the generator for comparing netmon with other collectors on the
// same stream.
//
//	go run ./collectors/flows/replay/cmd/flowreplay -pcap testdata/flows/netflow/softflowd-v9.pcap -to 127.0.0.1:2055 -rate 10000 -count 300000
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"

	"netmon/collectors/flows/replay"
)

func main() {
	pcap := flag.String("pcap", "testdata/flows/netflow/softflowd-v9.pcap", "pcap of exported datagrams")
	to := flag.String("to", "127.0.0.1:2055", "collector address")
	rate := flag.Int("rate", 10000, "datagrams per second (0 = as fast as possible)")
	count := flag.Int("count", 100000, "datagrams to send")
	retime := flag.Bool("retime", false, "set each NetFlow v5/v9 datagram's export time to now, so flows land in the current minutes")
	flag.Parse()
	ds, err := replay.Load(*pcap)
	if err != nil {
		fmt.Fprintln(os.Stderr, "flowreplay:", err)
		os.Exit(1)
	}
	conn, err := net.Dial("udp", *to)
	if err != nil {
		fmt.Fprintln(os.Stderr, "flowreplay:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	sendFn := replay.Send
	if *retime {
		sendFn = replay.SendRetimed
	}
	res, err := sendFn(ctx, conn, ds, *rate, *count)
	fmt.Printf("sent %d datagrams (%d flow records by header count) in %v: %.0f datagrams/s\n",
		res.Datagrams, res.Flows, res.Elapsed.Round(1e6), float64(res.Datagrams)/res.Elapsed.Seconds())
	if err != nil {
		fmt.Fprintln(os.Stderr, "flowreplay:", err)
		os.Exit(1)
	}
}
