#include "reports/render.h"

namespace rackchaos::reports {

Result<std::string> RenderHtml(const ReportStore& store, int64_t run) {
  RC_ASSIGN_OR_RETURN(RunReport report, LoadRunReport(store, run));
  return Status::NotSupported("the html report format is not implemented yet");
}

}  // namespace rackchaos::reports
