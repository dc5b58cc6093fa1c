"""Scripts a harness runs inside its own environment (standard library only)."""
