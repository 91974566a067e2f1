// The exact (Garwood) confidence interval for the mean of a Poisson count: the rate behind k events seen
// over an exposure is between Low and High with the given confidence. Used by `rackchaos catalogue fit`.
//   low  = the x with P(k, x) = (1 - confidence) / 2       (0 when k = 0)
//   high = the x with P(k + 1, x) = 1 - (1 - confidence) / 2
// where P is the regularized lower incomplete gamma function; equivalently chi-square quantiles,
// chi2((1-c)/2; 2k) / 2 and chi2(1-(1-c)/2; 2k+2) / 2. For k = 0 at 95%: [0, 3.689]; k = 10: [4.795, 18.39].
#pragma once

#include <cstdint>

namespace rackchaos::runner {

struct PoissonInterval {
  double low = 0, high = 0;  // in events (divide by the exposure for a rate)
};

// `confidence` in (0, 1), e.g. 0.95; k >= 0.
PoissonInterval PoissonMeanInterval(int64_t k, double confidence = 0.95);

// The regularized lower incomplete gamma function P(a, x) for a > 0, x >= 0.
double RegularizedGammaP(double a, double x);

}  // namespace rackchaos::runner
