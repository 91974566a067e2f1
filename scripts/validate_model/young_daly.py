"""The optimum checkpoint interval from a sweep against Young's, Daly's and Saxena et al.'s formulas.

Needs checkpoints that stop training (`checkpoint.blocking`, issue 22 item 3). Until the binary accepts that
key, the section says so and shows the formulas' values; once it does, the same code sweeps the interval and
reports where the model's ETTR peaks. Either way the script does not fail.
"""
import math
import os

from validate_model import common, jobs, studies
from validate_model.common import Sample

GRID_MIN = [5, 8, 11, 15, 22, 32]  # minutes: around the formulas' 15-17 min for the shipped study


def formulas(s):
    """Optimum intervals in minutes: (Young, Daly higher order, Saxena availability-optimal), and M, R."""
    m = s.hours_per_failure() * 60          # job MTTF the rate implies (minutes)
    d = s.blocking_min                      # checkpoint cost: training stops this long
    r = s.restart_min                       # restart overhead
    young = math.sqrt(2 * d * m)
    x = d / (2 * m)
    daly = math.sqrt(2 * d * m) * (1 + math.sqrt(x) / 3 + x / 9) - d if d < 2 * m else m
    saxena = d + math.sqrt(2 * (m + r) * d + d * d)
    return young, daly, saxena, m, r


def section(rc, tmp, plans_dir, seeds, base, blocking_key="blocking"):
    s = studies.young_daly_study(base, blocking_key)
    plan = os.path.join(plans_dir, s.name + ".yaml")
    with open(plan, "w") as f:
        f.write(studies.plan_text(s))
    young, daly, saxena, m, r = formulas(s)
    head = [
        "## 3. Optimum checkpoint interval against Young's and Daly's formulas", "",
        "Sources: Young, \"A first order approximation to the optimum checkpoint interval\" (CACM 1974): "
        "sqrt(2 d M);",
        "Daly, \"A higher order estimate of the optimum checkpoint interval for restart dumps\" (FGCS 2006):",
        "sqrt(2 d M) (1 + sqrt(d / 2M) / 3 + (d / 2M) / 9) - d; Saxena et al. (NVIDIA, arXiv 2410.18124),",
        "availability-optimal: d + sqrt(2 (M + R) d + d^2). d is the time training stops per checkpoint, M the",
        "job's MTTF, R the restart time.", "",
        "Plan: scenarios/validation/%s.yaml: %s GPUs at %.2f failures per 1000 server-days, a failure" % (
            s.name, "{:,}".format(s.gpus), s.rate_drawn),
        "every M = %.1f min (as a 16,384-GPU job at RSC-1's rate, on fewer servers so the sweep is cheap)," % m,
        "d = %g min, R = %g min. Formulas: Young %.1f min, Daly %.1f min, Saxena et al. %.1f min." % (
            s.blocking_min, r, young, daly, saxena), ""]
    ok, message = common.validate(rc, plan)
    message = message.replace(plans_dir, "scenarios/validation")  # the run's scratch folder is no part of it
    if not ok:
        return head + [
            "**Not expressible yet.** This binary refuses the plan: `%s`. Checkpoint writes never stop" % message,
            "training in today's model (`write_time` only delays when a checkpoint counts), so ETTR improves as",
            "the interval shrinks (section 2's 16,000-GPU job at 5 and 60 min) and a sweep over intervals",
            "has no optimum to compare. Once `checkpoint.%s` exists this section sweeps the interval" % (
                blocking_key),
            "over %s min, seeds 1-%d, and reports where the model's ETTR peaks." % (
                ", ".join("%d" % g for g in GRID_MIN), seeds), ""], [
            ("optimum checkpoint interval", "Young 1974, Daly 2006, Saxena et al. 2024", "validation/%s.yaml" % s.name,
             0, "not expressible yet", "%.1f / %.1f / %.1f min" % (young, daly, saxena), None)]
    try:
        by_interval = sweep_intervals(rc, tmp, plan, s, seeds)
    except (Exception, SystemExit) as e:  # a first binary with the key may still trip: say so, do not stop
        return head + ["**The sweep failed** on a binary that accepts the plan: `%s`." % str(e).splitlines()[0],
                       ""], [("optimum checkpoint interval", "Young 1974, Daly 2006, Saxena et al. 2024",
                              "validation/%s.yaml" % s.name, seeds, "sweep failed",
                              "%.1f / %.1f / %.1f min" % (young, daly, saxena), "**sweep failed**")]
    grid = sorted(by_interval)
    samples = [Sample(by_interval[g]) for g in grid]
    best = max(range(len(grid)), key=lambda i: samples[i].mean)
    vertex = parabola_vertex(grid, [x.mean for x in samples], best)
    lo, hi = grid[max(0, best - 1)], grid[min(len(grid) - 1, best + 1)]
    rows = ["| %g min | %s%s |" % (g, common.fmt_sample(x, 3), " **highest**" if i == best else "")
            for i, (g, x) in enumerate(zip(grid, samples))]
    inside = lo <= young <= hi and lo <= daly <= hi
    if vertex:
        model = "%g min (parabola through it and its neighbours in log interval: %.1f min)" % (grid[best], vertex)
    else:
        model = "%g min, the grid's edge: the optimum is there or beyond" % grid[best]
    return head + [
        "`rackchaos sweep %s.yaml --seeds %d --grid checkpoint.interval=V` for each V; ETTR mean +/- sd" % (
            s.name, seeds), "[min-max]:", "",
        "| interval | model ETTR |", "|---|---|"] + rows + [
        "",
        "Model optimum: %s." % model,
        "Inside when Young's and Daly's intervals fall between the grid points either side of the highest: %s." % (
            common.verdict(inside)),
        "The seeds are the same at every grid point (same failures), so the curve's shape is sharper than",
        "the spread of any one point suggests.", ""], [
        ("optimum checkpoint interval", "Young 1974, Daly 2006, Saxena et al. 2024", "validation/%s.yaml" % s.name,
         seeds, "%g min" % grid[best] + (" (fit %.1f)" % vertex if vertex else " (grid's edge)"),
         "%.1f / %.1f / %.1f min" % (young, daly, saxena), inside)]


def sweep_intervals(rc, tmp, plan, s, seeds):
    """{interval in minutes: [ETTR of each seed's run]}, one sweep per interval (nothing depends on how a
    sweep names its grid points)."""
    by_interval = {}
    for minutes in GRID_MIN:
        db = os.path.join(tmp, "%s-%dm.db" % (s.name, minutes))
        common.sweep(rc, plan, db, seeds, "checkpoint.interval=%dm" % minutes)
        by_interval[minutes] = [o.ettr for run_id, _seed, _point in jobs.sweep_runs(db)
                                for o in jobs.outcomes(db, run_id)]
    return by_interval


def parabola_vertex(xs, ys, i):
    """Vertex (in x) of the parabola in log x through points i-1, i, i+1; None at the grid's edge."""
    if i == 0 or i == len(xs) - 1:
        return None
    (x0, x1, x2), (y0, y1, y2) = [math.log(x) for x in xs[i - 1:i + 2]], ys[i - 1:i + 2]
    denom = (x0 - x1) * (x0 - x2) * (x1 - x2)
    a = (x2 * (y1 - y0) + x1 * (y0 - y2) + x0 * (y2 - y1)) / denom
    b = (x2 * x2 * (y0 - y1) + x1 * x1 * (y2 - y0) + x0 * x0 * (y1 - y2)) / denom
    if a >= 0:
        return None
    return math.exp(-b / (2 * a))
