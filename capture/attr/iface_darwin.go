package attr

// isVirtual reports whether a macOS interface is virtual, by its name
// (macOS has no /sys to ask): darwinVirtual (platform.go).
func isVirtual(name string) bool { return darwinVirtual(name) }
