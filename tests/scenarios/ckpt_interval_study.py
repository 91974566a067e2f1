#!/usr/bin/env python3
"""docs/jobs.md's checkpoint-interval table is what its one sweep gives today (issue 22's study).

Runs the command the page shows (scenarios/studies/ckpt-interval.yaml, one `rackchaos sweep` over
checkpoint.interval) into a scratch database. Checks that the plan takes its failure rate from a catalogue
file (chaos.catalogue names a file beside it, not a shipped catalogue or per-class percentages), reads each
grid point's ETTR from the stored runs (sweep_runs, job_metrics; reports/schema.cpp) and checks the page's
row of means to 3 decimals and its MTTF figure; then that the sweep's own report marks the optimum: the row
of the highest mean ETTR (as computed here from the database) ends in "<- highest", no other ettr.mean row
does, the "Best mean per metric" line names it, and it is the interval the page says. About 7 s of CPU.
Usage: ckpt_interval_study.py RACKCHAOS SOURCE_DIR SCRATCH_DIR
"""
import os
import re
import sqlite3
import subprocess
import sys


def main():
    rc, src, scratch = sys.argv[1:4]
    doc = open(os.path.join(src, "docs", "jobs.md")).read()
    cmd = re.search(r"rackchaos sweep (scenarios/studies/ckpt-interval\.yaml --seeds (\d+) \\\n\s+"
                    r"--grid checkpoint\.interval=([0-9m,]+)( --metrics [a-z_.,]+)?)", doc)
    if not cmd:
        sys.exit("docs/jobs.md: the study's sweep command was not found")
    seeds, grid = cmd.group(2), cmd.group(3)
    header = re.search(r"^\| interval \| (.*) \|$", doc, re.M).group(1).split(" | ")
    means = re.search(r"^\| ETTR, mean of %s seeds \| (.*) \|$" % seeds, doc, re.M).group(1).split(" | ")
    if header != grid.split(","):
        sys.exit("docs/jobs.md: the table's intervals %s are not the command's %s" % (header, grid))
    plan_path = os.path.join(src, "scenarios/studies/ckpt-interval.yaml")
    plan = open(plan_path).read()
    catalogue = re.search(r"^chaos:\n  catalogue: (\S+)\n", plan, re.M)
    if not catalogue or not catalogue.group(1).endswith(".yaml") or re.search(r"^  (classes|scale):", plan, re.M):
        sys.exit("ckpt-interval.yaml: chaos must name a catalogue file alone (no per-class percentages)")
    if not os.path.isfile(os.path.join(os.path.dirname(plan_path), catalogue.group(1))):
        sys.exit("ckpt-interval.yaml: its catalogue file %s is not beside it" % catalogue.group(1))
    os.makedirs(scratch, exist_ok=True)
    db = os.path.join(scratch, "ckpt-interval.db")
    if os.path.exists(db):
        os.remove(db)
    report = subprocess.run([rc, "sweep", plan_path, "--seeds", seeds, "--grid", "checkpoint.interval=" + grid,
                             "--metrics", "ettr.mean,job.mttf.mean", "--db", db, "--threads", "2"],
                            check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
    con = sqlite3.connect(db)
    ettr, mttf_h = {}, []
    for point, e, up_us, f in con.execute("SELECT s.point, j.ettr, j.up_us, j.failures FROM sweep_runs s "
                                          "JOIN job_metrics j ON j.run_id = s.run_id"):
        ettr.setdefault(point.split("=", 1)[1], []).append(e)
        mttf_h.append(up_us / 3.6e9 / f)  # job.mttf of the run's one job (every run here has failures)
    got = ["%.3f" % (sum(ettr[g]) / len(ettr[g])) for g in header]
    print("intervals:", " ".join(header))
    print("ETTR now: ", " ".join(got))
    print("ETTR doc: ", " ".join(means))
    bad = got != means
    mttf = sum(mttf_h) / len(mttf_h)  # job.mttf.mean over the runs, as the sweep's rows give it
    doc_mttf = re.search(r"`job\.mttf` ([0-9.]+) h", doc).group(1)
    print("job MTTF %.2f h (doc %s h)" % (mttf, doc_mttf))
    bad |= "%.2f" % mttf != doc_mttf
    best = max(header, key=lambda g: sum(ettr[g]) / len(ettr[g]))
    print("highest mean ETTR at", best)
    marked = re.findall(r"^  checkpoint\.interval=(\S+) +ettr\.mean .*<- highest$", report, re.M)
    print("the report marks:", marked)
    bad |= marked != [best]
    best_line = re.search(r"^  ettr\.mean: highest mean ([0-9.]+) at checkpoint\.interval=(\S+)$", report, re.M)
    bad |= not best_line or best_line.group(2) != best
    said = re.search(r"The optimum is at (\d+) min", doc)
    bad |= not said or said.group(1) + "m" != best
    shown = re.search(r"`ettr\.mean: highest mean ([0-9.]+) at checkpoint\.interval=(\S+)`", doc)
    bad |= not shown or not best_line or shown.groups() != best_line.groups()
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
