// Small integer ids for the things events talk about. Events hold ids, never pointers; the component
// table of a run (stored with the report) turns ids back into names such as "r01.tray07.gpu2".
#pragma once

#include <cstdint>

namespace rackchaos {

using ComponentId = uint32_t;
using JobId = uint32_t;
using FaultId = uint32_t;      // 1-based, in plan order; 0 = none
using DetectionId = uint32_t;  // 1-based, in detection order; 0 = none

inline constexpr ComponentId kNoComponent = UINT32_MAX;
inline constexpr JobId kNoJob = UINT32_MAX;
inline constexpr FaultId kNoFault = 0;
inline constexpr DetectionId kNoDetection = 0;

}  // namespace rackchaos
