"""What every validate-model section shares: running the rackchaos binary, small statistics, formats.

Nothing here knows a published figure; the sections do.
"""
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLAMA3_CATALOGUE = os.path.join(ROOT, "cluster", "catalogue", "failures-llama3.yaml")

# Two-sided 95% quantiles of Student's t by degrees of freedom (beyond 30: the normal's 1.96).
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
        10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
        18: 2.101, 19: 2.093, 20: 2.086, 24: 2.064, 30: 2.042}


def run(cmd, ok=(0, 1)):
    """Runs a command; exits the script with its output unless its code is in `ok`."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in ok:
        sys.exit("validate-model: %s failed (%d):\n%s%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p.stdout


def sweep(rc, plan, db, seeds, grid=None):
    """`rackchaos sweep PLAN --seeds N [--grid G]` into db, two runs at once (the machine's two cores)."""
    cmd = [rc, "sweep", plan, "--seeds", str(seeds), "--db", db, "-q", "--threads", "2"]
    if grid:
        cmd += ["--grid", grid]
    run(cmd)


def validate(rc, plan):
    """(True, '') when `rackchaos validate PLAN` accepts the plan, else (False, its message)."""
    p = subprocess.run([rc, "validate", plan], capture_output=True, text=True)
    if p.returncode == 0:
        return True, ""
    text = (p.stderr or p.stdout).strip().splitlines()
    return False, (text[0] if text else "exit %d" % p.returncode)


def metric_names(rc):
    """The gate metric names `rackchaos list metrics` prints."""
    return [line.split()[0] for line in run([rc, "list", "metrics"], ok=(0,)).splitlines() if line.strip()]


class Sample:
    """Per-seed values of one model output: mean, sample sd, range and the 95% t interval of the mean."""

    def __init__(self, values):
        self.values = list(values)
        n = len(self.values)
        self.n = n
        self.mean = sum(self.values) / n if n else float("nan")
        self.sd = math.sqrt(sum((v - self.mean) ** 2 for v in self.values) / (n - 1)) if n > 1 else 0.0
        self.lo = min(self.values) if n else float("nan")
        self.hi = max(self.values) if n else float("nan")
        half = t975(n - 1) * self.sd / math.sqrt(n) if n > 1 else float("inf")
        self.ci = (self.mean - half, self.mean + half)


def t975(df):
    if df >= 30:
        return 1.96 if df > 30 else T975[30]
    return T975[max(k for k in T975 if k <= df)]


def overlaps(ci, published):
    """A model's interval of the mean against a published value's own interval (its rounding)."""
    return ci[0] <= published[1] and published[0] <= ci[1]


def verdict(inside):
    return "inside" if inside else "**outside**"


def rounding_interval(text):
    """'0.93' -> (0.925, 0.935): the values a figure printed with that many decimals stands for."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    half = 0.5 * 10 ** -decimals
    v = float(text)
    return (v - half, v + half)


def fmt_sample(s, digits, unit=""):
    """'0.684 +/- 0.012 [0.669-0.702]': mean +/- sd over seeds [min-max]."""
    f = "%%.%df" % digits
    return (f + "%s +/- " + f + " [" + f + "-" + f + "]") % (s.mean, unit, s.sd, s.lo, s.hi)


def llama3_base_rate():
    """Job-interrupting failures per server-day the shipped llama3 catalogue draws at scale 1:
    the Table 5 counts over (reference GPUs / GPUs per node) x days."""
    ref, total = {}, 0
    with open(LLAMA3_CATALOGUE) as f:
        for line in f:
            s = line.split("#")[0].strip()
            for key in ("gpus:", "gpus_per_node:", "days:"):
                if s.startswith(key):
                    ref[key[:-1]] = float(s.split(":")[1])
            if s.startswith("- {name:"):
                total += int(s.split("count:")[1].split(",")[0])
    return total / (ref["gpus"] / ref["gpus_per_node"] * ref["days"])
