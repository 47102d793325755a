"""Execution engines beyond the local one: `ray_engine` runs encoding and search on a Ray cluster."""
