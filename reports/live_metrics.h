// Live metrics of a running `rackchaos run`, `sweep` or `serve`, for Prometheus to scrape (`/metrics`,
// text exposition format 0.0.4). Unlike RenderPrometheus (one stored run, every sample labelled with its
// run), these are the process's counters, gauges and histograms while it works, fed by the runs' events
// as they are recorded.
//
// Families (docs/serve.md lists them with their labels); every family is printed with # HELP and # TYPE
// from the start, even before it has a sample, so dashboards and alerting rules see it exists. Label sets
// are bounded: fault kinds, detector names, failure domains, action names, job states, event types, run
// statuses, backends, observation sources and rack names (no per-GPU or per-run label).
//
// Time to detect and to isolate are observed once per fault, as soon as a scoring of the events so far
// (LiveMetrics::Run::Scored) first attributes them; time to recover, jobs' ETTR, the unrecovered faults
// and the per-rack recovery totals only from a run's final metrics (a recovery known half-way can still
// move). Values are what the run's own clock says: simulated seconds in a simulated run.
//
// Threading: every call is thread-safe (one mutex); a sweep's workers feed one registry at once and an
// HTTP thread renders it. A Run belongs to the thread of its run.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/event.h"
#include "core/metrics.h"

namespace rackchaos::reports {

class LiveMetrics {
 public:
  // One run's feed: an EventSink the run's recorder tees every event into. Created by StartRun; Finish
  // takes the run off the active gauges (once; the destructor finishes it as 'error' if nobody did).
  class Run : public EventSink {
   public:
    ~Run() override;
    void Record(const Event& event) override;
    // The run's metrics so far (final = false) or at its end (final = true): see the header comment.
    void Scored(const RunMetrics& metrics, bool final);
    // `status` is the runs.status the run ends with (passed, failed, aborted, error, interrupted).
    void Finish(std::string_view status);

   private:
    friend class LiveMetrics;
    Run(LiveMetrics& registry, std::string backend) : registry_(registry), backend_(std::move(backend)) {}
    LiveMetrics& registry_;
    std::string backend_;
    bool finished_ = false;
    std::map<FaultId, std::string> open_faults_;  // applied now, with their kind
    std::map<FaultId, std::string> kinds_;        // every fault injected, with its kind
    std::map<DetectionId, std::string> detectors_;
    std::map<JobId, std::string> job_states_;
    std::set<FaultId> ttd_seen_, tti_seen_;
  };

  LiveMetrics();

  // A run begins on `backend` ("sim" | "ssh").
  std::unique_ptr<Run> StartRun(std::string_view backend);

  // Runner health in real mode: one poll of an observation source ("nvidia-smi", "journald", "redfish",
  // "scheduler", "prometheus", ...) that took `seconds` and succeeded or not.
  void ObservePoll(std::string_view source, double seconds, bool ok);
  // The fault ledger(s) this process watches: entries open, and the wall time (Unix seconds) the oldest
  // was opened at (0: none open). `ledger` names which one ("0" for serve's first database).
  void SetLedger(std::string_view ledger, int open, double oldest_opened_unix);
  // Serve's own requests: one answered on `route` (a route name, never the raw path) with `code`.
  void ObserveRequest(std::string_view route, int code, double seconds);
  // A gauge of stored runs by status in a database serve reads (`db` is its index).
  void SetStoredRuns(std::string_view db, std::string_view status, double runs);
  // The per-rack recovery totals of a database serve reads (labelled db and rack), as of now: counters
  // that grow as runs are stored.
  void SetStoredRackRecoveries(std::string_view db, std::string_view rack, double recoveries, double seconds);

  // The text exposition of every family, names in a fixed order; '\n' line ends.
  std::string Render() const;

  // Label pairs, in the order printed.
  using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  struct Series {
    double value = 0;              // counters and gauges
    std::vector<uint64_t> counts;  // histograms: per bucket (not cumulative), then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  struct Family {
    Type type = Type::kCounter;
    std::string help;
    std::vector<double> buckets;           // histograms: upper bounds, ascending
    std::map<std::string, Series> series;  // by rendered label text
  };

  void Define(const std::string& name, Type type, std::string help, std::vector<double> buckets = {});
  // Callers hold mu_.
  Series& At(std::string_view name, const Labels& labels);
  void Add(std::string_view name, const Labels& labels, double delta);
  void Set(std::string_view name, const Labels& labels, double value);
  void Observe(std::string_view name, const Labels& labels, double value);

  mutable std::mutex mu_;
  std::map<std::string, Family, std::less<>> families_;
};


}  // namespace rackchaos::reports
