"""Print confseq's betting capital for the cases on stdin (run by the confseq reference venv).

Input: a JSON list of cases {"y", "m", "bets", "n_total", "theta", "alpha", "trunc_scale"};
output: a JSON list of the log capital after each draw, one list per case. It imports nothing
from EnterpriseVal: confseq needs numpy < 2 and lives in its own environment
(``make reference-venv``), so tests/stats/test_sequential.py calls it as a subprocess.
"""

import json
import sys

import numpy as np
from confseq.betting import betting_mart


def log_capital(case: dict) -> list[float]:
    bets = np.asarray(case["bets"], dtype=float)
    capital = betting_mart(
        np.asarray(case["y"], dtype=float),
        case["m"],
        alpha=case["alpha"],
        lambdas_fn_positive=lambda x, m: bets,
        lambdas_fn_negative=lambda x, m: bets,
        N=case["n_total"],
        theta=case["theta"],
        trunc_scale=case["trunc_scale"],
    )
    return [float(v) for v in np.log(capital)]


if __name__ == "__main__":
    json.dump([log_capital(case) for case in json.load(sys.stdin)], sys.stdout)
