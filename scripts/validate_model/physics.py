"""Model behaviour with no published figure to compare: NVLink bandwidth with switch trays lost, and a
tray's or a switch tray's valve closing (time to thermal slowdown and shutdown).

Kept in docs/validation.md so a model change that moves them shows; the [guess] numbers they rest on are
named in the text.
"""
import os
import sqlite3

from validate_model.common import ROOT, run

VALVE_PLAN = """name: validate-valve-{pct}
description: a GB300 NVL72 {part} valve closes to {pct}% under a running job
seed: {seed}
duration: 1h
cluster:
  model: gb300-nvl72
  racks: 1
  spare_trays: 2
workload:
  jobs:
    - name: train-64
      gpus: 64
faults:
  - at: 10m
    kind: valve_fail
    target: {target}
    params: {{opening: {pct}%}}
    for: 30m
healer:
  policy: {policy}
"""

# Detects and isolates as the default policy does, but leaves the job running on the tray.
KEEP_LOAD_POLICY = """name: keep-load
description: default detection; no job restarts and no GPU resets, so the physics runs to its end
remediation:
  restart_jobs: false
  gpu_reset: false
"""

SWITCH_PLAN = """name: validate-switch-{mode}-{lost}
description: {lost} NVLink switch trays of a GB200 NVL72 rack lost in {mode} mode under a running job
seed: {seed}
duration: 40m
cluster:
  model: gb200-nvl72
  racks: 1
  nvlink_mode: {mode}
workload:
  jobs:
    - name: train-64
      gpus: 64
faults:{faults}
healer:
  policy: {policy}
"""

SWITCH_FAULT = """
  - at: 10m
    kind: switch_fail
    target: r01.switch{n}"""

# The job's share of a nominal step spent in NVLink collectives (cluster/job.h, JobConfig::nvlink_share).
NVLINK_SHARE = 0.10


def switch_cell(rc, tmp, seed, policy, mode, lost, gbps):
    """Runs one switch-tray plan; returns (table cell, time to detect, isolated component)."""
    plan = os.path.join(tmp, "switch-%s-%d.yaml" % (mode, lost))
    db = os.path.join(tmp, "switch-%s-%d.db" % (mode, lost))
    faults = "".join(SWITCH_FAULT.format(n=n) for n in range(1, lost + 1)) or " []"
    with open(plan, "w") as f:
        f.write(SWITCH_PLAN.format(mode=mode, lost=lost, seed=seed, policy=policy, faults=faults))
    run([rc, "run", plan, "--db", db, "-q"])
    con = sqlite3.connect(db)
    rid = con.execute("SELECT max(id) FROM runs").fetchone()[0]
    # The job's state and step time at 15 min, 5 min after the switch trays went.
    state, step = con.execute(
        "SELECT state, step_time_s FROM job_events WHERE run_id = ? AND t_us <= 900000000 ORDER BY seq DESC LIMIT 1",
        (rid,)).fetchone()
    nominal = con.execute("SELECT step_time_s FROM job_events WHERE run_id = ? ORDER BY seq LIMIT 1", (rid,)).fetchone()[0]
    health = con.execute(
        "SELECT what FROM physics WHERE run_id = ? AND what LIKE 'nvlink_domain_%' AND t_us <= 900000000"
        " ORDER BY seq DESC LIMIT 1", (rid,)).fetchone()
    ttd = con.execute(
        "SELECT min(d.t_us) - min(f.injected_us) FROM detections d, faults f WHERE d.run_id = ? AND f.run_id = ?",
        (rid, rid)).fetchone()[0]
    iso = con.execute(
        "SELECT group_concat(c.name, ', ') FROM isolations i JOIN components c ON c.run_id = i.run_id"
        " AND c.id = i.component_id WHERE i.run_id = ?", (rid,)).fetchone()[0]
    con.close()
    domain = health[0].replace("nvlink_domain_", "") if health else "HEALTHY"
    if state != "running":
        return "%s: job %s, 0 GB/s" % (domain, state), ttd, iso
    link_nominal = NVLINK_SHARE * nominal
    fraction = link_nominal / (step - nominal + link_nominal)
    return "%s: %.0f GB/s per GPU (%.3f), step %.3f s" % (domain, fraction * gbps, fraction, step), ttd, iso


def switch_section(rc, tmp, seed, number):
    policy = os.path.join(tmp, "keep-load.yaml")
    with open(policy, "w") as f:
        f.write(KEEP_LOAD_POLICY)
    gbps = 0
    with open(os.path.join(ROOT, "cluster", "catalogue", "gb200-nvl72.yaml")) as f:
        for line in f:
            if line.strip().startswith("gbytes_per_s_per_gpu:"):
                gbps = float(line.split(":")[1].split("#")[0])
    rows, notes = [], []
    for lost in (0, 1, 2):
        cells = []
        for mode in ("full", "adaptive"):
            cell, ttd, iso = switch_cell(rc, tmp, seed, policy, mode, lost, gbps)
            cells.append(cell)
            if lost:
                notes.append("- %s mode, %d lost: first symptom %.2f s after the fault; isolated: %s" % (
                    mode, lost, ttd / 1e6, iso or "nothing"))
        rows.append("| %d | %s | %s |" % (lost, cells[0], cells[1]))
    return ["## %d. NVLink bandwidth per GPU with switch trays lost (model behaviour)" % number, "",
            "Plan: one `gb200-nvl72` rack (9 switch trays, %.0f GB/s per GPU per direction), a 64-GPU job," % gbps,
            "`switch_fail` on r01.switch1 (and r01.switch2) at 10 min, `cluster.nvlink_mode` full or adaptive;",
            "the healer detects and isolates but does not restart the job. Read at 15 min from the report: the",
            "domain health the simulator recorded, and the job's step time. The bandwidth is what that step",
            "time implies: the job spends %d%% of a nominal step in NVLink collectives (cluster/job.h), so" % (
                NVLINK_SHARE * 100),
            "fraction = NVLink time at nominal / NVLink time now.", "",
            "| switch trays lost | full-bandwidth mode (shipped setting) | adaptive mode |", "|---|---|---|"] + rows + [
            "", "Full-bandwidth mode: one lost switch tray leaves the NVLink domain UNHEALTHY, no partition runs and",
            "the job hangs (then fails at the NCCL watchdog unless the healer moves it). Adaptive mode: the fabric",
            "routes over the remaining trays, every GPU at (9 - lost)/9. The healer localizes from the NVLink ports",
            "every GPU of the rack reports down (port p is wired to switch tray p x 9 / 18):", ""] + notes + [""]


def valve_run(rc, tmp, seed, policy, target, pct):
    """Closes `target`'s valve to pct%; returns (slowdown (s, C) or None, shutdown s or None, parts shut down)."""
    plan = os.path.join(tmp, "valve-%s-%d.yaml" % (target, pct))
    db = os.path.join(tmp, "valve-%s-%d.db" % (target, pct))
    part = "switch tray" if "switch" in target else "tray"
    with open(plan, "w") as f:
        f.write(VALVE_PLAN.format(pct=pct, seed=seed, policy=policy, target=target, part=part))
    run([rc, "run", plan, "--db", db, "-q"])
    con = sqlite3.connect(db)
    rid = con.execute("SELECT max(id) FROM runs").fetchone()[0]
    t0 = con.execute("SELECT min(t_us) FROM physics WHERE run_id = ? AND what = 'valve_opening'", (rid,)).fetchone()[0]

    def first(what):
        r = con.execute("SELECT min(t_us), max(value) FROM physics WHERE run_id = ? AND what = ?", (rid, what)).fetchone()
        return None if r[0] is None else ((r[0] - t0) / 1e6, r[1])

    slow, shut = first("thermal_slowdown"), first("thermal_shutdown")
    n_shut = con.execute("SELECT count(DISTINCT component_id) FROM physics WHERE run_id = ? AND what = 'thermal_shutdown'", (rid,)).fetchone()[0]
    det = con.execute("SELECT min(d.t_us) FROM detections d JOIN components c ON c.run_id = d.run_id AND "
                      "c.id = d.component_id WHERE d.run_id = ? AND d.detector = 'thermal' AND c.name = ?",
                      (rid, target)).fetchone()[0]
    con.close()
    return slow, shut, n_shut, None if det is None else (det - t0) / 1e6


def valve_section(rc, tmp, seed, number):
    policy = os.path.join(tmp, "keep-load.yaml")
    with open(policy, "w") as f:
        f.write(KEEP_LOAD_POLICY)
    rows, switch_rows = [], []
    for pct in (20, 0):
        slow, shut, n_shut, _ = valve_run(rc, tmp, seed, policy, "r01.tray04", pct)
        rows.append("| %d%% | %s | %s |" % (
            pct, "%.1f s (at %.1f C)" % slow if slow else "never",
            "%.1f s (%d GPUs)" % (shut[0], n_shut) if shut else "never: throttling holds the slowdown temperature"))
        slow, shut, n_shut, det = valve_run(rc, tmp, seed, policy, "r01.switch1", pct)
        switch_rows.append("| %d%% | %s | %s | %s |" % (
            pct, "%.1f s (at %.1f C)" % slow if slow else "never",
            "%.1f s (%d switch tray, lost to the domain)" % (shut[0], n_shut) if shut else "never",
            "%.1f s" % det if det is not None else "never"))
    m = {}  # "section.key" -> value
    with open(os.path.join(ROOT, "cluster", "catalogue", "gb300-nvl72.yaml")) as f:
        section = ""
        for line in f:
            parts = line.split("#")[0].rstrip().split(":")
            if len(parts) != 2:
                continue
            if not line.startswith(" "):
                section = parts[0].strip()
            if parts[1].strip():
                m[(section + "." if line.startswith(" ") else "") + parts[0].strip()] = parts[1].strip()
    g = lambda k: float(m[{"slowdown_c": "gpu.", "min_power_w": "gpu."}.get(k, "cooling.") + k])
    sw = lambda k: float(m["switch_tray." + k])
    sw_cond = sw("residual_conductance_w_per_k") + 0.2 * sw("conductance_w_per_k")
    cond = g("residual_conductance_w_per_k") + 0.2 * g("conductance_w_per_k")
    hold = cond * (g("slowdown_c") - g("inlet_c"))
    return ["## %d. A GB300 NVL72 tray valve closing to 20%% (model behaviour)" % number, "",
            "Plan: one `gb300-nvl72` rack, a 64-GPU job, `valve_fail` on r01.tray04 at 10 min for 30 min; the",
            "healer detects and isolates with the default thresholds but does not restart the job, so the",
            "tray's GPUs keep drawing their load (with restarts the job would leave the hot tray within seconds).",
            "Times are from the valve change to the first GPU's event in the physics table.", "",
            "| valve opening | time to thermal slowdown | time to shutdown |", "|---|---|---|"] + rows + [
            "", "Why 20%% never shuts down: conductance %.0f + 0.2 x %.0f = %.1f W/K; holding %.0f C takes %.0f W,"
            " above the %.0f W lowest power, so a throttled GPU settles at the slowdown temperature. Fully closed,"
            " only %.0f W/K remain and even the lowest power overheats it." % (
                g("residual_conductance_w_per_k"), g("conductance_w_per_k"), cond, g("slowdown_c"), hold,
                g("min_power_w"), g("residual_conductance_w_per_k")),
            "Model numbers (cluster/catalogue/gb300-nvl72.yaml): thresholds and heat capacity are [guess]es",
            "carried from H100-class parts; the result is only as good as them.", "",
            "The same valve on an NVLink switch tray (`valve_fail` on r01.switch1; the switch tray stands for its",
            "valve). A switch tray does not lower its power in the model: from its slowdown temperature its ports",
            "run at switch_tray.throttle_bandwidth = %s of their bandwidth ([guess]: NVIDIA publishes no NVSwitch" % (
                m["switch_tray.throttle_bandwidth"]),
            "throttle figure), so the domain keeps (8 + %s)/9 of its NVLink bandwidth; it heats on to shutdown and" % (
                m["switch_tray.throttle_bandwidth"]),
            "is then lost to the NVLink domain as if pulled (UNHEALTHY in the shipped full-bandwidth mode). It reports",
            "its temperature while it changes; the last column is the thermal detector's first alert on it (default",
            "thresholds: the GPUs' 2 C margin under slowdown, two 10 s polls in a row):", "",
            "| switch tray valve opening | time to thermal slowdown | time to shutdown | healer detects it hot |",
            "|---|---|---|---|"] + switch_rows + [
            "", "At 20%%: conductance %.0f + 0.2 x %.0f = %.0f W/K against %.0f W, a steady state of %.0f C, above the"
            " %.0f C shutdown; time constant %.0f J/K / %.0f W/K = %.0f s. Every switch-tray number in the"
            " catalogue's switch_tray section is a [guess]: no switch-tray power or thresholds are published." % (
                sw("residual_conductance_w_per_k"), sw("conductance_w_per_k"), sw_cond, sw("power_w"),
                g("inlet_c") + sw("power_w") / sw_cond, sw("shutdown_c"), sw("heat_capacity_j_per_k"), sw_cond,
                sw("heat_capacity_j_per_k") / sw_cond), ""]
