"""Write tests/conformance/stats_oracle.json: oracle values for multiple-testing corrections, effect sizes and power.

    python tests/conformance/make_stats_oracle.py

Every expected value comes from statsmodels or scipy (never from irboard), or from a published worked example:
- Benjamini & Hochberg (1995), section 4: 15 p-values from a clinical study; at q = 0.05 the FDR procedure
  rejects 4 hypotheses, Holm's (Bonferroni step-down) procedure 3.
- G*Power (Faul et al. 2007) / Cohen (1988): a two-sided one-sample or paired t-test at d = 0.5, alpha = 0.05 and
  power 0.8 needs n = 34 (actual power 0.8078).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import scipy
import statsmodels
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestPower

OUT = Path(__file__).with_name("stats_oracle.json")
BH_1995 = [0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262, 0.5719,
           0.6528, 0.7590, 1.0]


def corrections(p: list[float]) -> dict:
    return {
        "pvalues": p,
        "bh": multipletests(p, alpha=0.05, method="fdr_bh")[1].tolist(),
        "holm": multipletests(p, alpha=0.05, method="holm")[1].tolist(),
        "bh_rejected_at_0.05": int(multipletests(p, alpha=0.05, method="fdr_bh")[0].sum()),
        "holm_rejected_at_0.05": int(multipletests(p, alpha=0.05, method="holm")[0].sum()),
    }


def effect(a: np.ndarray, b: np.ndarray) -> dict:
    test = stats.ttest_rel(a, b)
    ci = test.confidence_interval(0.95)
    return {"a": a.tolist(), "b": b.tolist(), "mean_difference": float(np.mean(a - b)),
            "ci_low": float(ci.low), "ci_high": float(ci.high),
            "dz": float(test.statistic / np.sqrt(a.size)), "pvalue": float(test.pvalue)}


def main() -> None:
    rng = np.random.default_rng(2026)
    random_p = np.round(rng.random(40) ** 3, 4)
    random_p[[3, 17, 29]] = random_p[5]  # ties
    pairs = []
    for n, shift, noise in ((12, 0.05, 0.2), (50, 0.02, 0.1), (300, 0.01, 0.3)):
        b = np.round(rng.random(n), 4)
        a = np.round(np.clip(b + shift + noise * rng.standard_normal(n), 0, 1), 4)
        pairs.append(effect(a, b))
    power = TTestPower()
    mde = [{"n": n, "alpha": alpha, "dz": float(power.solve_power(nobs=n, alpha=alpha, power=0.8,
                                                                  alternative="two-sided"))}
           for n in (10, 34, 50, 300, 1000, 6980) for alpha in (0.05, 0.001)]
    powers = [{"n": n, "dz": d, "alpha": 0.05, "power": float(power.power(d, n, 0.05, alternative="two-sided"))}
              for n, d in ((34, 0.5), (33, 0.5), (100, 0.2), (20, 0.8))]
    data = {
        "generated_by": "tests/conformance/make_stats_oracle.py",
        "statsmodels": statsmodels.__version__, "scipy": scipy.__version__, "numpy": np.__version__,
        "tolerance": 1e-9,
        "corrections": {"bh_1995_example": corrections(BH_1995), "random_with_ties": corrections(random_p.tolist())},
        "published": {
            "bh_1995_rejected_bh": 4, "bh_1995_rejected_holm": 3,
            "gpower_paired_t": {"dz": 0.5, "alpha": 0.05, "power": 0.8, "n": 34, "actual_power": 0.8078,
                                "actual_power_tolerance": 5e-4},
        },
        "effects": pairs,
        "minimum_detectable_effect": mde,
        "power": powers,
    }
    OUT.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
