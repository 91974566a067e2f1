// Strict number parsing the observe parsers share (whole field, finite values only): the tools' output
// is read field by field. Trimming, line splitting and searching are core/strings.h's. Pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/strings.h"

namespace rackchaos::observe {

// The whole of `s` as a finite decimal number ("612.5", "-3", "1e3"). False for "", "NaN", "inf", "12x".
bool ParseNumber(std::string_view s, double& out);
// The whole of `s` as a non-negative integer (decimal digits only).
bool ParseCount(std::string_view s, uint64_t& out);
// A bitmask: "0x0000000000000044" (hex, up to 16 digits) or a decimal integer.
bool ParseBits(std::string_view s, uint64_t& out);

}  // namespace rackchaos::observe
