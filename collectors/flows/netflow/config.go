package netflow

// Config bounds the template cache. Both limits exist because templates
// arrive over UDP from any address: without them one spoofed exporter
// could fill the hub's memory (RELIABILITY.md case 3).
type Config struct {
	// MaxTemplatesPerExporter is how many templates (data and options,
	// all observation domains together) one exporter address may have
	// cached. Past it, that exporter's oldest template is evicted; other
	// exporters are never touched. Real exporters use a handful.
	MaxTemplatesPerExporter int
	// MaxExporters is how many exporter addresses may have templates.
	// Templates from a new address past it are refused (counted in
	// Result.TemplatesRefused) rather than evicting a known exporter's.
	MaxExporters int
}

// DefaultConfig returns limits fit for a hub with thousands of exporters.
func DefaultConfig() Config {
	return Config{MaxTemplatesPerExporter: 4096, MaxExporters: 10000}
}

// maxTemplateFields bounds one template's field count. A 64 KiB datagram
// could declare 16 000 fields; refusing more than 256 keeps one cached
// template under ~6 KB, so the per-exporter cap is also a memory cap
// (4096 × 6 KB ≈ 25 MB at worst). Real templates have 10 to 100 fields.
const maxTemplateFields = 256

// withDefaults fills zero or negative limits with the defaults.
func (c Config) withDefaults() Config {
	def := DefaultConfig()
	if c.MaxTemplatesPerExporter <= 0 {
		c.MaxTemplatesPerExporter = def.MaxTemplatesPerExporter
	}
	if c.MaxExporters <= 0 {
		c.MaxExporters = def.MaxExporters
	}
	return c
}
