package state

// syncDir is a no-op on Windows: directories cannot be opened for
// syncing there, and MoveFileEx (os.Rename) is durable enough for us.
func syncDir(string) {}
