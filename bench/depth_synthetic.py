"""Recovery of a known τ by the cognitive-hierarchy fit, and the speed of the fit and its bootstrap.

    python bench/depth_synthetic.py [--datasets 20] [--resamples 1000]

For τ = 0.5, 1.5, 3 (σ = 0.03, n = 5, p = 2/3) it draws `datasets` data sets the size of
beauty_L.test's first run (100 sessions × 5 seats = 500 choices), fits each with a bootstrap over
sessions, and prints the first data set's estimate and interval, then over all data sets: the
mean and sd of the estimate, the largest error, how often the interval covered the truth, the mean
interval width, and the time per fit (grid, refinement and bootstrap together). This exercises
econarena_evals/core/depth.py alone; bench/depth_recovery.py plays the econarena/ch players through oaieval.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from econarena_evals.core import depth  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", type=int, default=20)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--sigma", type=float, default=0.03)
    args = ap.parse_args()
    print(f"n = 5, p = 2/3, σ = {args.sigma}, 100 sessions × 5 choices, {args.resamples} bootstrap resamples")
    print()
    print("| true τ | estimate (data set 1) | 95 % interval | σ̂ | mean of estimates | sd | max error | coverage | "
          "mean width | s per fit |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for tau in (0.5, 1.5, 3.0):
        fits, times = [], []
        for i in range(args.datasets):
            x = depth.sample_ch(tau, args.sigma, 5, 2 / 3, np.random.default_rng(1000 + i), 500)
            t = time.perf_counter()
            fits.append(depth.fit_with_interval([x[j:j + 5] for j in range(0, 500, 5)], resamples=args.resamples,
                                                seed=i))
            times.append(time.perf_counter() - t)
        est = np.array([f["tau"] for f in fits])
        cover = sum(f["ci_low"] <= tau <= f["ci_high"] for f in fits)
        width = np.mean([f["ci_high"] - f["ci_low"] for f in fits])
        f0 = fits[0]
        print(f"| {tau} | {f0['tau']:.3f} | [{f0['ci_low']:.3f}, {f0['ci_high']:.3f}] | {f0['sigma']:.4f} | "
              f"{est.mean():.3f} | {est.std():.3f} | {np.abs(est - tau).max():.3f} | {cover}/{len(fits)} | "
              f"{width:.3f} | {np.median(times):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
