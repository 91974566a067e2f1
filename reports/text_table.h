// Plain-ASCII tables for terminal renderers: columns padded to their widest cell, two spaces apart,
// no colours and no trailing spaces, so the output diffs cleanly and reads in any terminal or log.
#pragma once

#include <string>
#include <vector>

namespace rackchaos::reports {

enum class Align { kLeft, kRight };

class TextTable {
 public:
  // `align` gives each column's alignment; missing entries are left-aligned.
  explicit TextTable(std::vector<std::string> headers, std::vector<Align> align = {});

  // Adds a row; missing trailing cells render empty, extra cells are ignored.
  void AddRow(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }

  // The header, a line of dashes under it, then the rows; every line starts with `indent` and ends
  // with '\n'. Widths count bytes: cells are expected to be ASCII.
  std::string Render(const std::string& indent = "") const;

 private:
  std::string RenderLine(const std::vector<std::string>& cells, const std::vector<size_t>& widths,
                         const std::string& indent) const;

  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace rackchaos::reports
