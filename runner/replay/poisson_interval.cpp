#include "runner/replay/poisson_interval.h"

#include <cmath>
#include <limits>

namespace rackchaos::runner {
namespace {

constexpr double kEps = 1e-15;
constexpr int kMaxTerms = 100000;

// Series for P(a, x), which converges fast for x < a + 1.
double GammaSeries(double a, double x) {
  double term = 1 / a, sum = term;
  for (int n = 1; n < kMaxTerms; ++n) {
    term *= x / (a + n);
    sum += term;
    if (std::fabs(term) < std::fabs(sum) * kEps) break;
  }
  return sum * std::exp(-x + a * std::log(x) - std::lgamma(a));
}

// Continued fraction (modified Lentz) for Q(a, x) = 1 - P(a, x), for x >= a + 1.
double GammaContinuedFraction(double a, double x) {
  const double tiny = std::numeric_limits<double>::min() / kEps;
  double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
  for (int i = 1; i < kMaxTerms; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1) < kEps) break;
  }
  return std::exp(-x + a * std::log(x) - std::lgamma(a)) * h;
}

// The x >= 0 with P(a, x) = p, by bisection (P rises monotonically in x).
double GammaQuantile(double a, double p) {
  double lo = 0, hi = a + 40 * std::sqrt(a) + 100;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (RegularizedGammaP(a, mid) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace

double RegularizedGammaP(double a, double x) {
  if (x <= 0) return 0;
  return x < a + 1 ? GammaSeries(a, x) : 1 - GammaContinuedFraction(a, x);
}

PoissonInterval PoissonMeanInterval(int64_t k, double confidence) {
  const double tail = (1 - confidence) / 2;
  PoissonInterval out;
  out.low = k == 0 ? 0 : GammaQuantile(static_cast<double>(k), tail);
  out.high = GammaQuantile(static_cast<double>(k) + 1, 1 - tail);
  return out;
}

}  // namespace rackchaos::runner
