// Jobs' reference trajectories and what they leave on their trays (cluster/sim_thermal.h, the quiet-GPU
// model).
//
// A job's quiet GPUs share one trajectory: idle steady state when it is placed, retargeted when it starts
// or stops drawing power. When it leaves its trays, what that trajectory holds above idle stays on each
// tray as its carry (per GPU on a partly used tray) and decays from there.
//
// Restarts in place (sim_restart.cpp) keep most trays: a kept tray owes the release it did not take.
// Each such release is logged once per restart in the job's carry_log and applied by SettleCarry, in
// order and with the same arithmetic, before anyone reads the tray's carry or the tray changes hands.
// Temperatures are bit-identical to a full release.
#include <bit>

#include "cluster/sim_scheduler.h"
#include "cluster/sim_thermal.h"

namespace rackchaos::cluster {

void Thermal::AddJob() { job_heat_.emplace_back(); }

void Thermal::JobPlaced(JobId job) {
  job_heat_[job].env = ThermalState{idle_steady_c_, clock_.Now(), idle_steady_c_, full_tau_s_};
}

void Thermal::JobPowerChanged(JobId id) {
  const RackModel& m = topo_.model();
  double power = job_list_[id].state == JobState::kRunning ? m.gpu_tdp_w : m.gpu_idle_w;
  JobHeat& job = job_heat_[id];
  job.env = Retarget(job.env, clock_.Now(), power, full_conductance_, m.gpu_heat_capacity_j_per_k, m.inlet_c);
  for (ComponentId g : LoudGpusOf(id)) UpdateThermal(g);
}

std::vector<ComponentId> Thermal::LoudGpusOf(JobId job) const {
  std::vector<ComponentId> loud;
  for (ComponentId g : loud_gpus_)
    if (seats_.JobOfGpu(g) == job) loud.push_back(g);
  return loud;
}

// One pass over the job's trays (a restart of a big job).
void Thermal::LeaveTrays(JobId job, const TrayList& trays) {
  Time now = clock_.Now();
  double residual = TemperatureAt(job_heat_[job].env, now) - idle_steady_c_;
  const int per_tray = topo_.model().gpus_per_tray;
  // Trays placed together were last settled together: one exp serves them all, with the same result.
  Time memo_at = now;
  double memo = 1;
  auto decay = [&](Time since) {
    if (since != memo_at) memo = Decay(memo_at = since, now);
    return memo;
  };
  // A whole tray's new carry depends only on its carry, carry_at and settled steps before (the job, its
  // log, `now` and `residual` are the same for all): trays placed and restarted together share them, so
  // the last whole tray's result serves the next one with the same inputs, bit for bit.
  struct WholeTrayMemo {
    bool valid = false;
    uint32_t settled = 0;
    uint64_t carry_bits = 0;
    Time carry_at{};
    TrayCarry after;
  } last;
  for (ComponentId tray : trays) {
    const size_t k = topo_.TraySlot(tray);
    TrayCarry& t = carry_[k];
    const int job_gpus = seats_.gpus_at(k);
    const bool whole = job_gpus == per_tray && seats_.job_at(k) == job;
    if (whole && last.valid && last.settled == t.settled && last.carry_bits == std::bit_cast<uint64_t>(t.carry) &&
        last.carry_at == t.carry_at) {
      t = last.after;
      continue;
    }
    const WholeTrayMemo before{true, t.settled, std::bit_cast<uint64_t>(t.carry), t.carry_at, {}};
    SettleCarry(k);
    if (job_gpus == per_tray) {
      t.carry = t.carry * decay(t.carry_at) + residual;
      t.carry_at = now;
      if (whole) {
        last = before;
        last.after = t;
      }
    } else {
      for (ComponentId g : topo_.GpusOfTray(tray)) {
        GpuHeat& s = heat(g);
        if (!s.quiet || topo_.at(g).index >= job_gpus) continue;
        s.off = s.off * Decay(s.off_at, now) + residual;
        s.off_at = now;
      }
    }
  }
}

void Thermal::LogCarryStep(JobId id) {
  JobHeat& j = job_heat_[id];
  const Time now = clock_.Now();
  const double since_last = j.carry_log.empty() ? 1 : Decay(j.carry_log.back().at, now);
  j.carry_log.push_back({now, TemperatureAt(j.env, now) - idle_steady_c_, since_last});
  // The fresh reference trajectory is idle now: the job is queued on its kept trays, which draws the
  // same idle power as no job.
  j.env = ThermalState{idle_steady_c_, now, idle_steady_c_, full_tau_s_};
}

void Thermal::SettleCarry(size_t k) const {
  const JobId job = seats_.job_at(k);
  if (job == kNoJob) return;
  TrayCarry& s = carry_[k];
  const std::vector<JobHeat::CarryStep>& log = job_heat_[job].carry_log;
  if (s.settled >= log.size()) return;
  // The same job, steps and carry as the last settle (the log only grows): the same result, bit for bit.
  SettleMemo& m = settle_memo_;
  const uint64_t bits = std::bit_cast<uint64_t>(s.carry);
  if (m.job == job && m.from == s.settled && m.to == log.size() && m.carry_at == s.carry_at && m.carry_bits == bits) {
    s.carry = m.carry;
    s.carry_at = m.at;
    s.settled = m.to;
    return;
  }
  m = SettleMemo{job, s.settled, static_cast<uint32_t>(log.size()), bits, s.carry_at, {}, 0};
  for (; s.settled < log.size(); ++s.settled) {
    const JobHeat::CarryStep& step = log[s.settled];
    double decay = step.decay;  // the same value Decay() gives for the same two instants: one exp per step
    if (s.settled == 0 || s.carry_at != log[s.settled - 1].at) {
      if (s.carry_at != settle_since_ || step.at != settle_at_) {
        settle_since_ = s.carry_at;
        settle_at_ = step.at;
        settle_decay_ = Decay(s.carry_at, step.at);
      }
      decay = settle_decay_;
    }
    s.carry = s.carry * decay + step.residual;
    s.carry_at = step.at;
  }
  m.carry = s.carry;
  m.at = s.carry_at;
}

}  // namespace rackchaos::cluster
