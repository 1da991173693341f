"""End-to-end tests: real agent CLIs (installed from npm) against the mock model."""
