// libFuzzer target: any bytes through the failure catalogue loader (cluster/failure_catalogue.h), the file
// a plan's chaos.catalogue names. The contract under test: no crash, no hang, no exception escaping;
// errors are one line naming fuzz.yaml; a loaded catalogue's rates and shapes are numbers the chaos draws
// can use (finite, rates not negative, shapes positive), and a draw from each class is a finite time.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "cluster/failure_catalogue.h"
#include "core/rng.h"
#include "tests/fuzz/fuzz_yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace rc = rackchaos::cluster;
  auto cat = rc::ParseFailureCatalogue(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  if (!cat.ok()) {
    const std::string& m = cat.status().message();
    rackchaos::fuzz::CheckRefusal(m);
    return 0;
  }
  for (const rc::FailureCause& c : cat->causes)
    if (!std::isfinite(c.rate_per_hour) || c.rate_per_hour < 0 || c.repair.Seconds() < 0) std::abort();
  rackchaos::Rng rng(1);
  for (rc::FailureClass cls : rc::kFailureClasses) {
    double shape = cat->ShapeOf(cls), rate = cat->ClassRatePerHour(cls);
    if (!std::isfinite(shape) || shape <= 0 || !std::isfinite(rate) || rate < 0) std::abort();
    if (rate > 0) {
      double hours = rc::HoursToNextFailure(rng, rate, shape);
      if (std::isnan(hours) || hours < 0) std::abort();
    }
  }
  return 0;
}
