"""Loopback servers for the collector tests."""
