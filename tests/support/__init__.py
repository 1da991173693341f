"""Test support code shared by corral's test suites.

Among it: `mockmodel`, a stateless mock of the model APIs that the real
agent CLIs call, and `realagents`, which installs pinned agent CLIs from npm
and builds sandboxes (HOME, config files, env, argv) pointing them at a mock.
"""
