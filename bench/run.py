"""``make bench``: the statistics core against the reference libraries on large inputs.

Each case runs ours and the reference interleaved in each of ``--repetitions`` (≥ 3)
repetitions (``bench.harness``). Prints, per case, the median time per call of each side and
of the ratio ours/reference (target ≤ 1.0), each with its range (min–max) over the
repetitions, and whether the results agree (rtol 1e-9). Exits 1 if any result differs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from bench.harness import MIN_REPETITIONS, measure, spread_text

CASE_MODULES = ("bench.cases_ppi", "bench.cases_agreement", "bench.cases_segment")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=5, help="interleaved repetitions (≥ 3)")
    parser.add_argument(
        "--min-batch", type=float, default=0.05, help="seconds each side's batch runs at least"
    )
    options = parser.parse_args(argv)
    if options.repetitions < MIN_REPETITIONS:
        parser.error(f"--repetitions: at least {MIN_REPETITIONS}")
    started = time.perf_counter()
    load = os.getloadavg()
    print(
        f"{options.repetitions} interleaved repetitions (AB, BA, …); per call: median (min–max); "
        f"load average {load[0]:.1f} on {os.cpu_count()} CPUs",
        flush=True,
    )
    rows = []
    for module_name in CASE_MODULES:
        module = importlib.import_module(module_name)
        for case in module.cases():
            timing = measure(case, options.repetitions, min_batch_s=options.min_batch)
            rows.append(timing)
            ratio = timing.ratio_spread
            print(
                f"{timing.name}\n    ours {spread_text(timing.ours)}   "
                f"reference {spread_text(timing.reference)}   "
                f"ratio {ratio.median:5.2f} ({ratio.low:.2f}–{ratio.high:.2f})   "
                f"{'identical' if timing.identical else 'DIFFERENT'}",
                flush=True,
            )
    worst = max(rows, key=lambda t: t.ratio)
    load = os.getloadavg()
    print(
        f"\n{len(rows)} cases in {time.perf_counter() - started:.1f} s "
        f"(load average {load[0]:.1f} at the end); "
        f"worst ratio {worst.ratio:.2f} ({worst.name}); "
        f"{sum(t.ratio <= 1.0 for t in rows)}/{len(rows)} at or under 1.0 (median ratio)"
    )
    different = [t.name for t in rows if not t.identical]
    if different:
        print("results differ from the reference: " + ", ".join(different), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
