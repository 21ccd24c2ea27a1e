// The demo backend.
