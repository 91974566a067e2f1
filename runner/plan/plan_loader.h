// Plan loading: YAML text -> Plan values, with one-line errors that name file:line:column.
//
// This step checks the shape of a plan: known keys, types, ranges, units, selector syntax, pick modes,
// parallelism arithmetic and unique job names. It does not check names against the catalogue, fault
// kinds against the injector table, or targets against the topology: ValidatePlan does that later,
// using the positions kept in the Plan.
//
// Every error is a Status with one line of text, "FILE:LINE:COL: <what is wrong>; <what would be valid>",
// for example
//   plan.yaml:7:1: unknown key 'faultz'; expected one of: name, description, ... (did you mean 'faults'?)
// Lines and columns are 1-based. Nothing throws out of these functions; hostile input (huge files, deep
// nesting, alias bombs, binary bytes) is refused with an error before or while parsing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/user_file.h"
#include "runner/plan/plan.h"

namespace rackchaos::runner {

// Plans larger than kMaxPlanBytes (core/user_file.h, 16 MiB) are refused unread.
inline constexpr int kMaxPlanDepth = 64;            // nesting of maps, lists and brackets
inline constexpr size_t kMaxPlanNodes = 1'000'000;  // nodes the loader will visit

// One key the plan format accepts. The loader validates against this table, and docs are generated
// from it, so the two cannot drift apart.
struct KeyInfo {
  enum class Type { kString, kInt, kNumber, kUint64, kDuration, kMap, kList, kSelector, kPick, kBool };
  std::string_view section;  // "" = top level; "cluster", "workload.jobs[]", "faults[]", ...
  std::string_view key;
  Type type;
  bool required = false;
  int64_t min = 0, max = 0;        // inclusive bounds: kInt and kNumber as is, kDuration in microseconds
  std::string_view default_value;  // as documentation text; empty when required or absent means "none"
  std::string_view example;        // a valid value, used in messages: "e.g. racks: 2"
  std::string_view description;
};

// Every key of every section, in documentation order.
const std::vector<KeyInfo>& PlanKeys();

// "an integer from 1 to 100000", "a duration such as 90s, 5m, 2h", ...: how a key's type reads in
// messages and docs.
std::string DescribeType(const KeyInfo& key);

// Reads the plan at `path` (core/user_file.h: a regular file of at most kMaxPlanBytes) and parses it.
// Fails with kNotFound if the file does not exist, kIoError if it cannot be read as a plan file (a
// directory, device, FIFO or socket, too large, unreadable), and kInvalidArgument for its content.
Result<Plan> LoadPlan(const std::string& path);

// Parses plan text; `path_for_messages` is used as FILE in errors and stored as Plan::path. The text is
// kept in Plan::text. Fails with kInvalidArgument.
Result<Plan> ParsePlan(const std::string& text, const std::string& path_for_messages);

}  // namespace rackchaos::runner
