package evitaserver

// SetFreePort replaces how Start picks a port, for a test of the port race; it
// returns the undo.
func SetFreePort(f func() (int, error)) func() {
	old := freePort
	freePort = f
	return func() { freePort = old }
}

// ListensOn is listensOn, for its test.
var ListensOn = listensOn
