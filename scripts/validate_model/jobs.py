"""Per-job outcomes of one stored run, read back from a report database (reports/schema.cpp).

For every job: its metrics row (wall, productive, ETTR, interruptions), the hours it spent in each state
(running, hung, failed, queued, restarting) from its job_events, and the chaos faults that struck one of
its servers: a fault whose target sits in a server of the job's placement at the moment it was injected.
"""
import bisect
import sqlite3
from dataclasses import dataclass, field


@dataclass
class JobOutcome:
    name: str
    gpus: int
    wall_h: float
    productive_h: float
    ettr: float
    interruptions: int
    hours: dict = field(default_factory=dict)   # state -> hours in it
    struck: int = 0          # faults on its servers while it was running or restarting
    struck_hung: int = 0     # ... while it was already down (hung or failed): the same outage
    # Faults on its servers while it restarted, by (fault kind, the job's next state): 'running' when the
    # restart ended as if nothing happened, 'queued' when the job went back to wait for servers.
    during_restart: dict = field(default_factory=dict)

    def held_h(self):
        """Hours the job held its servers: running, hung (waiting to be found out) or restarting."""
        return sum(self.hours.get(s, 0.0) for s in ("running", "hung", "failed", "restarting"))


class Placements:
    """Membership in a job's placement: rows are a base placement plus trays added and removed."""

    def __init__(self, con, run_id):
        self.rows = {}
        for pid, base, trays, added, removed in con.execute(
                "SELECT id, base_id, trays, added, removed FROM placements WHERE run_id = ?", (run_id,)):
            self.rows[pid] = (base, ids(trays), ids(added), ids(removed))

    def holds(self, pid, tray):
        while pid is not None:
            base, trays, added, removed = self.rows[pid]
            if tray in added:
                return True
            if tray in removed:
                return False
            if base is None:
                return tray in trays
            pid = base
        return False


def ids(text):
    return frozenset(int(x) for x in text.split(",") if x) if text else frozenset()


def tray_of(con, run_id, component, cache):
    """The compute tray (server) holding a component, or None (a switch, a rack part)."""
    start = component
    while component is not None:
        if component in cache:
            component = cache[component]
            break
        row = con.execute("SELECT kind, parent_id FROM components WHERE run_id = ? AND id = ?",
                          (run_id, component)).fetchone()
        if row is None:
            component = None
            break
        if row[0] == "compute_tray":
            break
        component = row[1]
    cache[start] = component
    return component


def outcomes(db, run_id):
    """JobOutcome of every job of the run, in the report's job order."""
    con = sqlite3.connect(db)
    jobs = con.execute("SELECT job_id, name, gpus, wall_us, productive_us, ettr, interruptions FROM job_metrics"
                       " WHERE run_id = ? ORDER BY ord", (run_id,)).fetchall()
    events = {}
    for job_id, t, state, pid in con.execute(
            "SELECT job_id, t_us, state, placement_id FROM job_events WHERE run_id = ? ORDER BY seq", (run_id,)):
        events.setdefault(job_id, []).append((t, state, pid))
    faults = con.execute("SELECT injected_us, target_id, kind FROM faults WHERE run_id = ? AND selector LIKE 'chaos %'",
                         (run_id,)).fetchall()
    placements = Placements(con, run_id)
    cache = {}
    trays = [(t, tray_of(con, run_id, target, cache), kind) for t, target, kind in faults]
    result = []
    for job_id, name, gpus, wall_us, productive_us, ettr, interruptions in jobs:
        ev = events.get(job_id, [])
        o = JobOutcome(name, gpus, wall_us / 3.6e9, productive_us / 3.6e9, ettr, interruptions)
        if ev:
            end = ev[0][0] + wall_us
            for (t, state, _), (t_next, _, _) in zip(ev, ev[1:] + [(end, None, None)]):
                o.hours[state] = o.hours.get(state, 0.0) + (t_next - t) / 3.6e9
            times = [t for t, _, _ in ev]
            for t, tray, kind in trays:
                i = bisect.bisect_left(times, t) - 1  # the state in force just before the fault
                if i < 0 or tray is None:
                    continue
                _, state, pid = ev[i]
                if pid is None or not placements.holds(pid, tray):
                    continue
                if state in ("running", "restarting"):
                    o.struck += 1
                if state == "restarting" and i + 1 < len(ev):
                    key = (kind, ev[i + 1][1])
                    o.during_restart[key] = o.during_restart.get(key, 0) + 1
                elif state in ("hung", "failed"):
                    o.struck_hung += 1
        result.append(o)
    con.close()
    return result


def sweep_runs(db):
    """[(run_id, seed, grid point text)] of every run in a sweep's database, by seed (then run id): a sweep
    stores its runs in the order they finish, which its threads make vary; seed order does not."""
    con = sqlite3.connect(db)
    rows = con.execute("SELECT r.id, r.seed, coalesce(s.point, '') FROM runs r LEFT JOIN sweep_runs s"
                       " ON s.run_id = r.id ORDER BY r.seed, r.id").fetchall()
    con.close()
    return [(r, seed, "" if point == "-" else point) for r, seed, point in rows]  # '-': a sweep without a grid
