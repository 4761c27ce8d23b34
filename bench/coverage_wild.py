"""Whether a wild cluster bootstrap-t would make the intervals of means, paired
differences and win rates exact where the published ones are conservative (10 annotators
with skewed workloads, `bench/coverage_df.py`): the published intervals (two-way CR2
Student-t; Korn and Graubard's Wilson interval for win rates) against wild cluster
bootstrap-t intervals on the same simulated studies (the crowds, settings and seeds of
`bench/coverage_df.py`, so that the "published" column of means and paired differences
reproduces its "fitted"). A win rate is the mean of a 0/1 outcome (the compared answer
preferred), bootstrapped as a mean.

Intercept-only model. The bootstrap draws its weights per annotator (the dimension with
fewer clusters, and fewer effective clusters, in every setting: MacKinnon, Nielsen and Webb
2021's choice); each bootstrap t is studentized with the published two-way CR2 standard
error, recomputed in every bootstrap sample (vectorized below and checked against
`two_way_cluster_means` at start).

- WCR (null imposed): for H0 mu = mu0, y* = mu0 + w_a (y - mu0). Every bootstrap residual
  is p_i - mu0 q_i, so each one-way CR2 sum is a quadratic in mu0 with coefficients
  computed once per figure, and a bootstrap p-value at any mu0 costs O(B). The interval
  is {mu0 : p(mu0) > 0.05}, its ends found by bisection; coverage is p(truth) > 0.05 (the
  same as "truth inside" when the accepted set is an interval, which is checked).
- WCU (unrestricted): y* = ybar + w_a e; a symmetric interval ybar +- c SE with c the
  bootstrap quantile of |t*|.
- Weights: Rademacher (all 2^G sign vectors when G <= 12, else B random) and Webb's six
  points (B random). Symmetric weights: the symmetric and equal-tailed bootstrap-t agree.
- `--cells`: WCR with the weights drawn per cell instead, for contrast.

Prints, per setting and figure, coverage on the figures the published rule makes (Monte
Carlo standard error clustered by study), coverage over all figures, each interval's
half-width relative to the published one, and the CPU per figure. Pure numpy; `--save DIR`
keeps the per-figure rows.

    .venv/bin/python bench/coverage_wild.py --studies10 2000 --studies 500 --cells   # 12 min
    .venv/bin/python bench/coverage_wild.py --studies10 1000 --studies 500 --cells --strong
    .venv/bin/python bench/coverage_wild.py --studies10 4000 --studies 4000 --webb-only  # 18 min
    .venv/bin/python bench/coverage_wild.py --studies10 4000 --studies 4000 --webb-only --strong
"""

import argparse
import math
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

# One thread for numpy's products: the CPU per figure is then the cost one worker process
# would pay, not that of whatever threads the machine lends it.
for _threads in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation.stats.crowd import Crowd, simulate  # noqa: E402
from annotation.stats.intervals import (  # noqa: E402
    clustered_proportions,
    t_quantile,
    two_way_cluster_means,
)

SETTINGS = [(10, 1.0), (10, 0.0), (40, 0.0), (40, 1.5)]
FIGURES = ("mean", "paired difference", "win rate")
KINDS = ("rademacher", "webb")
ALPHA = 0.05
WEBB = np.array([-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5)])


def compact(x):
    return np.unique(x, return_inverse=True)[1].ravel()


def weights(rng, kind: str, clusters: int, draws: int) -> np.ndarray:
    """clusters x B weight matrix."""
    if kind == "rademacher":
        if clusters <= 12:
            codes = np.arange(2**clusters)
            return (((codes[None, :] >> np.arange(clusters)[:, None]) & 1) * 2 - 1).astype(float)
        return rng.choice([-1.0, 1.0], size=(clusters, draws))
    if kind == "webb":
        return rng.choice(WEBB, size=(clusters, draws))
    raise ValueError(kind)


class Boot:
    """Bootstrap t-statistics of one figure as a function of mu0, for a fixed weight
    matrix W (one column per bootstrap sample) over the clusters `boot_cluster`."""

    def __init__(self, y, cell, annotator, boot_cluster, W):
        y = np.asarray(y, float)
        n = len(y)
        self.n, self.y = n, y
        self.ybar = y.mean()
        h = compact(boot_cluster)
        H = h.max() + 1
        W = W[:H] if W.shape[0] >= H else None
        assert W is not None
        # Everything is linear in the weights through per-(cluster, boot cluster) sums:
        # P_g = sum_h Ysum[g, h] w_h - n_g alpha, Q_g = sum_h N[g, h] w_h - n_g beta.
        self.alpha = np.bincount(h, weights=y, minlength=H) @ W / n
        self.beta = np.bincount(h, minlength=H).astype(float) @ W / n
        cell, annotator = compact(cell), compact(annotator)
        both = compact(cell * (annotator.max() + 1) + annotator)
        self.terms = [self._term(cl, h, H, y, W) for cl in (cell, annotator, both)]
        # Original sample (unrestricted residuals): SE does not depend on mu0.
        e = y - self.ybar
        v = []
        for cl in (cell, annotator, both):
            sizes = np.bincount(cl).astype(float)
            f = np.where(sizes < n, 1 / (1 - sizes / n), 0.0)
            v.append(float((f * np.bincount(cl, weights=e) ** 2).sum()))
        total = v[0] + v[1] - v[2]
        self.se0 = math.sqrt((total if total > 0 else max(v[0], v[1])) / n**2)

    def _term(self, cluster, h, H, y, W):
        """Coefficients (a, b, c) with sum_g f_g (P_g - mu0 Q_g)^2 = a - 2 b mu0 + c mu0^2,
        where P_g - mu0 Q_g is cluster g's sum of the bootstrap residuals
        e*_i = w_h(i) (y_i - mu0) - mean(w (y - mu0))."""
        G = cluster.max() + 1
        key = cluster * H + h
        Ysum = np.bincount(key, weights=y, minlength=G * H).reshape(G, H)
        N = np.bincount(key, minlength=G * H).reshape(G, H).astype(float)
        sizes = N.sum(1)
        assert (sizes > 0).sum() > 1, "one cluster"
        f = np.where(sizes < self.n, 1 / (1 - sizes / self.n), 0.0)[:, None]
        P = Ysum @ W - sizes[:, None] * self.alpha
        Q = N @ W - sizes[:, None] * self.beta
        return (f * P * P).sum(0), (f * P * Q).sum(0), (f * Q * Q).sum(0)

    def variances(self, mu0):
        v = [a - 2 * b * mu0 + c * mu0 * mu0 for a, b, c in self.terms]
        vc, va, vb = v
        total = vc + va - vb
        return np.where(total > 0, total, np.fmax(vc, va)) / self.n**2

    def tstar(self, mu0):
        num = self.alpha - mu0 * self.beta
        with np.errstate(invalid="ignore", divide="ignore"):
            return num / np.sqrt(self.variances(mu0))

    def pvalue(self, mu0):
        t = abs(self.ybar - mu0) / self.se0
        ts = np.abs(self.tstar(mu0))
        # Draws with SE* = 0 (t* undefined) count as extreme; ties (the identity draw
        # gives t* = t exactly) count as extreme.
        return float(np.mean(~(ts < t * (1 - 1e-9))))

    def wcu_critical(self):
        ts = np.sort(np.abs(self.tstar(self.ybar)))[::-1]
        ts = ts[np.isfinite(ts)]
        k = math.floor(ALPHA * len(ts))  # p > alpha  <=>  |t| <= k-th largest (0-based)
        return ts[k]

    def inverted(self, tol=1e-4):
        """WCR interval endpoints by bracketing outward from ybar in steps of SE0 and
        bisection; also whether p was seen to re-cross alpha inside (non-interval)."""
        ends, nonconvex = [], False
        for sign in (-1, 1):
            inside, step = 0.0, 0.5
            k = step
            while self.pvalue(self.ybar + sign * k * self.se0) > ALPHA:
                inside = k
                k += step
                if k > 200:
                    ends.append(sign * np.inf)
                    break
            else:
                # a few points past the crossing: does it come back above alpha?
                for extra in (1.5, 2, 3, 5):
                    if self.pvalue(self.ybar + sign * k * extra * self.se0) > ALPHA:
                        nonconvex = True
                lo, hi = inside, k
                while (hi - lo) > tol:
                    mid = 0.5 * (lo + hi)
                    if self.pvalue(self.ybar + sign * mid * self.se0) > ALPHA:
                        lo = mid
                    else:
                        hi = mid
                ends.append(self.ybar + sign * 0.5 * (lo + hi) * self.se0)
        return ends[0], ends[1], nonconvex


def check(rng):
    """The vectorized SE against two_way_cluster_means, on explicit bootstrap samples."""
    crowd = Crowd(annotators=10, workload_sd=1.0)
    study = simulate(rng, crowd)
    mine = study["right"] == 1
    y = study["value_right"][mine] - study["value_left"][mine]
    cell, ann = study["cell"][mine], study["annotator"][mine]
    W = weights(rng, "webb", 10, 50)
    boot = Boot(y, cell, ann, ann, W)
    ref = two_way_cluster_means(y, np.zeros(len(y), int), cell, ann, 1)
    assert abs(boot.se0 - ref.standard_error[0]) < 1e-12 * ref.standard_error[0], (
        boot.se0,
        ref.standard_error[0],
    )
    for mu0 in (0.0, 0.25, -1.3):
        se = np.sqrt(boot.variances(mu0))
        ts = boot.tstar(mu0)
        for b in range(0, 50, 7):
            ystar = mu0 + W[ann, b] * (y - mu0)
            r = two_way_cluster_means(ystar, np.zeros(len(y), int), cell, ann, 1)
            assert abs(se[b] - r.standard_error[0]) < 1e-9 * r.standard_error[0]
            assert abs(ts[b] - (r.mean[0] - mu0) / r.standard_error[0]) < 1e-8
    # identity weights reproduce the original t
    Wid = np.ones((10, 1))
    bid = Boot(y, cell, ann, ann, Wid)
    assert abs(bid.tstar(0.3)[0] - (y.mean() - 0.3) / boot.se0) < 1e-9
    print("check: vectorized two-way CR2 SE and t* match two_way_cluster_means", flush=True)


def run(crowd, studies, seed, B, with_cells, timing, kinds=KINDS):
    rng = np.random.default_rng(seed)  # the studies: same stream as coverage_df
    brng = np.random.default_rng(seed + 1_000_003)  # the bootstrap weights
    levels = crowd.levels()
    G = crowd.annotators
    methods = ["published"]
    for kind in kinds:
        methods += [f"WCR-{kind[0].upper()}", f"WCU-{kind[0].upper()}"]
    methods += ["WCR-cells"] if with_cells else []
    rows = {name: [] for name in FIGURES}
    study_id = {name: [] for name in FIGURES}
    cpu = []
    nonconvex = 0
    rad = weights(brng, "rademacher", G, B) if G <= 12 else None
    for s in range(studies):
        study = simulate(rng, crowd)
        for source in range(1, crowd.sources):
            mine = study["right"] == source
            ann, cell = study["annotator"][mine], study["cell"][mine]
            for name, y, truth in (
                ("mean", study["value_right"][mine], levels[source]),
                (
                    "paired difference",
                    study["value_right"][mine] - study["value_left"][mine],
                    levels[source] - levels[0],
                ),
                ("win rate", 1.0 - study["left_won"][mine], crowd.true_win_rate(source)),
            ):
                pub = two_way_cluster_means(y, np.zeros(len(y), int), cell, ann, 1)
                err, se, df = pub.mean[0] - truth, pub.standard_error[0], pub.df[0]
                if name == "win rate":
                    # Published: Korn and Graubard's Wilson interval on n / deff with t.
                    ((_s, _n, _d, low, high),) = clustered_proportions(
                        y, np.zeros(len(y), int), cell, ann, 1
                    )
                    made = bool(np.isfinite(low) and np.isfinite(high))
                    row = [made, bool(made and low <= truth <= high), (high - low) / 2]
                else:
                    tq = float(t_quantile(df))
                    made = bool(np.isfinite(tq))
                    row = [made, bool(made and abs(err) <= tq * se), tq * se if made else np.nan]
                for kind in kinds:
                    t0 = time.process_time()
                    W = (
                        rad
                        if (kind == "rademacher" and rad is not None)
                        else weights(brng, kind, G, B)
                    )
                    boot = Boot(y, cell, ann, ann, W)
                    cover_r = boot.pvalue(truth) > ALPHA
                    if timing:
                        lo, hi, nc = boot.inverted()
                        nonconvex += nc
                        inside = lo <= truth <= hi
                        if inside != cover_r:
                            nonconvex += 1000  # flag disagreement
                        width_r = (hi - lo) / 2
                    else:
                        width_r = np.nan
                    c = boot.wcu_critical()
                    cpu.append((kind, name, time.process_time() - t0))
                    row += [cover_r, width_r, abs(err) <= c * se, c * se]
                if with_cells:
                    cc = compact(cell)
                    Wc = weights(brng, "rademacher", cc.max() + 1, B)
                    bc = Boot(y, cell, ann, cc, Wc)
                    row += [bc.pvalue(truth) > ALPHA, np.nan]
                rows[name].append(row)
                study_id[name].append(s)
    return (
        methods,
        {k: np.array(v, float) for k, v in rows.items()},
        {k: np.array(v) for k, v in study_id.items()},
        cpu,
        nonconvex,
    )


def summarize(label, crowd, methods, rows, sid, studies):
    out = []
    for name, r in rows.items():
        made = r[:, 0].astype(bool)
        cols = {"published": (r[:, 1], r[:, 2])}
        j = 3
        for m in methods[1:]:
            if m == "WCR-cells":
                cols[m] = (r[:, j], r[:, j + 1])
                j += 2
            else:
                cols[m] = (r[:, j], r[:, j + 1])
                j += 2
        line = {}
        for m, (cov, width) in cols.items():
            subset = made  # every method on the figures the published rule makes
            # MC SE clustered by study (two figures per study)
            per = np.bincount(sid[name][subset], weights=cov[subset], minlength=studies)
            cnt = np.bincount(sid[name][subset], minlength=studies)
            keep = cnt > 0
            share = per[keep].sum() / cnt[keep].sum()
            resid = per[keep] - share * cnt[keep]
            mcse = math.sqrt((resid**2).sum()) / cnt[keep].sum()
            all_share = cov.mean() if m != "published" else np.nan
            rel_width = (
                (np.mean(width[subset] / r[subset, 2]) if np.isfinite(width).any() else np.nan)
                if m != "published"
                else 1.0
            )
            line[m] = (share, mcse, all_share, rel_width)
        out.append((name, 1 - made.mean(), line))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--studies10", type=int, default=1000, help="studies at (10, sd 1)")
    ap.add_argument("--studies", type=int, default=500, help="studies elsewhere")
    ap.add_argument("--B", type=int, default=1999, help="random bootstrap draws")
    ap.add_argument("--strong", action="store_true")
    ap.add_argument("--cells", action="store_true", help="also WCR clustered by cells")
    ap.add_argument("--only", default="", help="e.g. 10:1.0 to run one setting")
    ap.add_argument("--no-invert", action="store_true", help="skip endpoint bisection")
    ap.add_argument("--save", default="", help="a directory for the per-figure rows (.npz)")
    ap.add_argument("--webb-only", action="store_true", help="Webb's weights only (no Rademacher)")
    a = ap.parse_args()
    kinds = ("webb",) if a.webb_only else KINDS
    check(np.random.default_rng(7))
    base = Crowd(leniency_sd=0.8, taste_sd=0.6) if a.strong else Crowd()
    print(f"crowd: {base}\nB = {a.B} random draws (Rademacher enumerated when G <= 12)")
    print(
        "coverage % on figures the published rule makes (MC SE clustered by study); "
        "[all figures]; half-width relative to published"
    )
    settings = SETTINGS
    if a.only:
        g, sd = a.only.split(":")
        settings = [(int(g), float(sd))]
    for annotators, sd in settings:
        crowd = replace(base, annotators=annotators, workload_sd=sd)
        studies = a.studies10 if (annotators, sd) == (10, 1.0) else a.studies
        wall = time.time()
        methods, rows, sid, cpu, nonconvex = run(
            crowd, studies, annotators * 10 + int(sd * 10), a.B, a.cells, not a.no_invert, kinds
        )
        if a.save:
            np.savez(
                Path(a.save) / f"rows_{'strong' if a.strong else 'base'}_{annotators}_{sd}.npz",
                methods=np.array(methods),
                **{k.replace(" ", "_"): v for k, v in rows.items()},
                **{"sid_" + k.replace(" ", "_"): v for k, v in sid.items()},
            )
        print(
            f"\n({annotators} annotators, workload sd {sd}): {studies} studies, "
            f"{time.time() - wall:.0f} s wall; non-interval/disagreement flags: {nonconvex}"
        )
        for kind in kinds:
            t = [c for k, _, c in cpu if k == kind]
            print(
                f"  CPU per figure, {kind}: {np.mean(t) * 1000:.1f} ms (median {np.median(t) * 1000:.1f})"
            )
        for name, none, line in summarize("", crowd, methods, rows, sid, studies):
            print(f"  {name:<18} no interval (published rule): {none * 100:.1f} %")
            for m, (share, mcse, all_share, rel) in line.items():
                extra = (
                    "" if m == "published" else f"  [all {all_share * 100:5.1f}]  width x{rel:.3f}"
                )
                print(f"    {m:<10} {share * 100:5.1f} ± {mcse * 100:.1f}{extra}", flush=True)


if __name__ == "__main__":
    main()
