// This empty module keeps the Go tools (go list ./..., go vet ./...) out
// of node_modules, where npm packages sometimes ship Go code.
