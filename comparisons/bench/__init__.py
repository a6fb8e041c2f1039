"""Benchmarks: one script per engine, our seconds beside a peer's on the same data."""
