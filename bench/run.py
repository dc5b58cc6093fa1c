"""``make bench``: the statistics core against the reference libraries on large inputs.

Prints, per case, our time, the reference's time, the ratio ours/reference (target ≤ 1.0)
and whether the results agree (rtol 1e-9). Exits 1 if any result differs.
"""

from __future__ import annotations

import importlib
import os
import sys
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from bench.harness import measure

CASE_MODULES = ("bench.cases_ppi", "bench.cases_agreement", "bench.cases_segment")


def main() -> int:
    started = time.perf_counter()
    rows = []
    for module_name in CASE_MODULES:
        module = importlib.import_module(module_name)
        for case in module.cases():
            timing = measure(case)
            rows.append(timing)
            print(
                f"{timing.name:<70} ours {timing.ours_s * 1e3:9.1f} ms   "
                f"reference {timing.reference_s * 1e3:9.1f} ms   "
                f"ratio {timing.ratio:5.2f}   {'identical' if timing.identical else 'DIFFERENT'}",
                flush=True,
            )
    worst = max(rows, key=lambda t: t.ratio)
    print(
        f"\n{len(rows)} cases in {time.perf_counter() - started:.1f} s; "
        f"worst ratio {worst.ratio:.2f} ({worst.name}); "
        f"{sum(t.ratio <= 1.0 for t in rows)}/{len(rows)} at or under 1.0"
    )
    different = [t.name for t in rows if not t.identical]
    if different:
        print("results differ from the reference: " + ", ".join(different), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
