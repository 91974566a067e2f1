// Small text helpers the observe parsers share: trimming, line splitting and strict number parsing
// (whole field, finite values only). Pure functions, no allocation besides the returned vector.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace rackchaos::observe {

std::string_view Trim(std::string_view s);  // spaces, tabs, \r and \n at both ends
// Lines without their "\n" (and a trailing "\r"); no empty last line for text ending in "\n".
std::vector<std::string_view> SplitLines(std::string_view text);
bool StartsWith(std::string_view s, std::string_view prefix);
bool Contains(std::string_view s, std::string_view part);

// The whole of `s` as a finite decimal number ("612.5", "-3", "1e3"). False for "", "NaN", "inf", "12x".
bool ParseNumber(std::string_view s, double& out);
// The whole of `s` as a non-negative integer (decimal digits only).
bool ParseCount(std::string_view s, uint64_t& out);
// A bitmask: "0x0000000000000044" (hex, up to 16 digits) or a decimal integer.
bool ParseBits(std::string_view s, uint64_t& out);

}  // namespace rackchaos::observe
