#include "reports/text_table.h"

#include <algorithm>
#include <utility>

namespace rackchaos::reports {

TextTable::TextTable(std::vector<std::string> headers, std::vector<Align> align)
    : headers_(std::move(headers)), align_(std::move(align)) {
  align_.resize(headers_.size(), Align::kLeft);
}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string TextTable::RenderLine(const std::vector<std::string>& cells,
                                  const std::vector<size_t>& widths,
                                  const std::string& indent) const {
  std::string line = indent;
  for (size_t c = 0; c < cells.size(); ++c) {
    if (c > 0) line += "  ";
    std::string pad(widths[c] - cells[c].size(), ' ');
    line += align_[c] == Align::kRight ? pad + cells[c] : cells[c] + pad;
  }
  // Left-aligned last columns would otherwise leave trailing blanks.
  line.erase(line.find_last_not_of(' ') + 1);
  return line + "\n";
}

std::string TextTable::Render(const std::string& indent) const {
  std::vector<size_t> widths(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) {
    widths[c] = headers_[c].size();
    for (const auto& row : rows_) widths[c] = std::max(widths[c], row[c].size());
  }
  std::vector<std::string> rule;
  for (size_t w : widths) rule.push_back(std::string(w, '-'));
  std::string out = RenderLine(headers_, widths, indent) + RenderLine(rule, widths, indent);
  for (const auto& row : rows_) out += RenderLine(row, widths, indent);
  return out;
}

}  // namespace rackchaos::reports
