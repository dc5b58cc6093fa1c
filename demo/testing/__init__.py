"""Test doubles shared by the test suite, benchmarks and demos (never used by the product)."""
