// SPDX-License-Identifier: MIT
#pragma once

#include "logrx/finding.h"

namespace logrx::detail {

// redact_report for a report whose findings were redacted one by one when
// they were emitted (the analyzer's own): facts, diagnostics, merged
// remediation and ranks.
void redact_report_except_findings(Report& report);

}  // namespace logrx::detail
