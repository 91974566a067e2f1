// A seeded random generator whose output is the same on every platform and library version.
//
// std::mt19937_64 is portable but the std:: distributions are not, so the distributions are written
// here. Fork() derives an independent stream by name, so adding a random process to a plan does not
// shift the numbers every other process draws.
#pragma once

#include <cstdint>
#include <string_view>

namespace rackchaos {

class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t Next();                         // 64 uniform bits (xoshiro256**)
  double Uniform();                        // [0, 1)
  double Uniform(double lo, double hi);    // [lo, hi)
  uint64_t Below(uint64_t n);              // [0, n), unbiased; n must be > 0
  double Exponential(double rate);         // mean 1/rate
  double Weibull(double shape, double scale);
  double Normal(double mean, double stddev);
  // An independent generator derived from this one's seed and `stream` (not from its position).
  Rng Fork(std::string_view stream) const;

  uint64_t seed() const { return seed_; }

 private:
  uint64_t seed_;
  uint64_t s_[4];
};

}  // namespace rackchaos
