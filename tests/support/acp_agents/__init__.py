"""Small ACP agents built on the official Python SDK, for integration tests."""
