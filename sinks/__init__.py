"""Sinks: where a session's records go (the app's lines, the in-process
stream, the transcript archive, Prometheus metrics)."""
