package capture

// Health returns what the network health score reads of the capture
// (alerting/health.Capture): the error it reports ("" = none), the
// packets it read and those the kernel dropped since it started.
func (c *Capture) Health() (errText string, packets, dropped int64) {
	s := c.Snapshot()
	return s.Error, s.TotalPackets, s.Dropped
}
