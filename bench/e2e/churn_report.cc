#include "bench/e2e/churn_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/e2e/bench_cli.h"
#include "bench/e2e/latency_stats.h"

namespace mesh::bench {
namespace {

double OnCpuPercent(const ChurnMode& m, int threads) {
  return m.seconds > 0 ? 100 * m.caller_cpu_s / (m.seconds * threads) : 0.0;
}
double CpuNsPerCall(const ChurnMode& m) {
  return m.latency.count() > 0 ? 1e9 * m.caller_cpu_s / m.latency.count() : 0.0;
}

double Us(const LatencyHistogram& h, double p) {
  return h.PercentileNs(p) / 1000.0;
}
double Ms(const LatencyHistogram& h, double p) {
  return h.PercentileNs(p) / 1e6;
}

// Latency by percentile, one column per mode (µs), for the plot.
std::string CurveCsv(const std::vector<ChurnMode>& modes) {
  std::string csv = "percentile,one_over_one_minus_p";
  for (const ChurnMode& m : modes) absl::StrAppend(&csv, ",", m.name);
  csv += "\n";
  for (double p : CurvePercentiles()) {
    absl::StrAppendFormat(&csv, "%.4f,%.4f", p, 100.0 / (100.0 - p));
    for (const ChurnMode& m : modes) {
      absl::StrAppendFormat(&csv, ",%.3f", Us(m.latency, p));
    }
    csv += "\n";
  }
  return csv;
}

// Issue 6's goal ("pick latency percentiles unchanged, no errors") per
// discovery mode against the quiet phases (modes[0]). "Unchanged" is read
// as within kUnchanged of quiet: on a shared 2-core VM, phases of the same
// kind differ by about that much.
std::string GoalRows(const std::vector<ChurnMode>& modes) {
  constexpr double kUnchanged = 1.2;
  MarkdownTable rows({"goal", "measured", "verdict"});
  const LatencyHistogram& quiet = modes[0].latency;
  for (size_t i = 1; i < modes.size(); ++i) {
    const ChurnMode& m = modes[i];
    if (m.name == "noise") continue;
    rows.AddRow({absl::StrFormat("churn (%s): no failed call", m.name),
                 absl::StrFormat("**%s** of %s", Thousands(m.errors),
                                 Thousands(m.latency.count())),
                 Verdict(m.errors == 0, Thousands(m.errors))});
    for (double p : {50.0, 99.0, 99.9}) {
      const double q = Us(quiet, p);
      const double c = Us(m.latency, p);
      const double r = q > 0 ? c / q : 0.0;
      rows.AddRow(
          {absl::StrFormat("churn (%s): p%g ≤ %.1f× quiet's", m.name, p,
                           kUnchanged),
           absl::StrFormat("%.2f / %.2f µs = **%.2f×**", c, q, r),
           Verdict(r <= kUnchanged, absl::StrFormat("%.2f×", r / kUnchanged))});
    }
  }
  return rows.ToString();
}

}  // namespace

ChurnReport ReportChurn(const std::vector<ChurnMode>& modes,
                        const std::vector<ApplyStats>& applied, int threads) {
  ChurnReport report;
  report.csv =
      "mode,calls,errors,p50_us,p90_us,p99_us,p999_us,max_us,updates_per_s\n";
  MarkdownTable table({"mode", "calls", "errors", "p50", "p90", "p99", "p99.9",
                       "max", "updates/s applied"});
  auto us = [](double v) {
    return v >= 1000 ? absl::StrFormat("%.2f ms", v / 1000)
                     : absl::StrFormat("%.2f µs", v);
  };
  for (const ChurnMode& m : modes) {
    const LatencyHistogram& h = m.latency;
    const double rate = m.seconds > 0 ? m.applied_in_phase / m.seconds : 0;
    absl::StrAppendFormat(&report.csv,
                          "%s,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.1f\n", m.name,
                          h.count(), m.errors, Us(h, 50), Us(h, 90), Us(h, 99),
                          Us(h, 99.9), Us(h, 100), rate);
    table.AddRow({m.description, Thousands(h.count()), Thousands(m.errors),
                  us(Us(h, 50)), us(Us(h, 90)), us(Us(h, 99)), us(Us(h, 99.9)),
                  us(Us(h, 100)),
                  m.update ? absl::StrFormat("%.1f", rate) : "0"});
  }
  std::string md = table.ToString();

  const LatencyHistogram& quiet = modes[0].latency;
  md += "\nRatios against quiet:";
  for (size_t i = 1; i < modes.size(); ++i) {
    const ChurnMode& m = modes[i];
    auto ratio = [&](double p) {
      const double q = quiet.PercentileNs(p);
      return q > 0 ? m.latency.PercentileNs(p) / q : 0.0;
    };
    absl::StrAppendFormat(&md,
                          "%s %s p50 **%.3f×**, p90 %.3f×, p99 **%.3f×**, "
                          "p99.9 %.3f×",
                          i == 1 ? "" : ";", m.name, ratio(50), ratio(90),
                          ratio(99), ratio(99.9));
  }
  // "On CPU": the callers' CPU time over their wall time; below 100 % they
  // were descheduled (other threads or processes had the core).
  md +=
      ".\n\nCaller threads on CPU (CPU time / wall time), CPU per call, and "
      "how often the scheduler took their core away (involuntary context "
      "switches):";
  for (size_t i = 0; i < modes.size(); ++i) {
    const ChurnMode& m = modes[i];
    const double per_s = m.seconds > 0 ? m.preempted / m.seconds : 0.0;
    const double calls_per = m.preempted > 0
                                 ? static_cast<double>(m.latency.count()) /
                                       static_cast<double>(m.preempted)
                                 : 0.0;
    absl::StrAppendFormat(&md, "%s %s %.1f %%, %.0f ns, %s/s (1 per %s calls)",
                          i == 0 ? "" : ";", m.name, OnCpuPercent(m, threads),
                          CpuNsPerCall(m),
                          Thousands(static_cast<int64_t>(per_s)),
                          Thousands(static_cast<int64_t>(calls_per)));
  }
  md +=
      ". Machine-wide interrupts/s (TLB shootdowns, rescheduling, function "
      "call):";
  for (size_t i = 0; i < modes.size(); ++i) {
    const ChurnMode& m = modes[i];
    const double sec = std::max(m.seconds, 1e-9);
    absl::StrAppendFormat(&md, "%s %s %.0f, %.0f, %.0f", i == 0 ? "" : ";",
                          m.name, m.tlb / sec, m.res / sec, m.cal / sec);
  }
  md += ".\n\n";
  for (size_t i = 1; i < modes.size(); ++i) {
    const ChurnMode& m = modes[i];
    const ApplyStats& a = applied[i];
    if (m.name == "noise") {
      absl::StrAppendFormat(
          &md,
          "noise: %s ticks (%.1f/s) of 2 pieces of work, %.2f ms each at "
          "p50, %.2f ms at p99.\n",
          Thousands(m.updates_sent),
          m.seconds > 0 ? m.updates_sent / m.seconds : 0.0, Ms(m.work_ns, 50),
          Ms(m.work_ns, 99));
      continue;
    }
    const double busy =
        a.apply_ns.sum_ns() / 1e9 / std::max(m.seconds + m.drain_seconds, 1e-9);
    absl::StrAppendFormat(
        &md,
        "%s: %s updates sent (%.1f/s), %s applied before their phase ended "
        "(%.1f/s), %s in all (waiting %.2f s after the phases), in %s "
        "messages; the Mesh applied a message in %.2f ms at p50, %.2f ms at "
        "p99 (max %.2f ms), applying %.0f %% of the time; an update was "
        "visible to picks %.2f ms after it was sent at p50, %.2f ms at p99 "
        "(max %.2f ms); discovery errors: %s%s%s.\n",
        m.name, Thousands(m.updates_sent),
        m.seconds > 0 ? m.updates_sent / m.seconds : 0.0,
        Thousands(m.applied_in_phase),
        m.seconds > 0 ? m.applied_in_phase / m.seconds : 0.0,
        Thousands(a.matched), m.drain_seconds, Thousands(a.messages),
        Ms(a.apply_ns, 50), Ms(a.apply_ns, 99), Ms(a.apply_ns, 100), 100 * busy,
        Ms(a.visible_ns, 50), Ms(a.visible_ns, 99), Ms(a.visible_ns, 100),
        Thousands(a.discovery_errors),
        a.last_error.empty() ? "" : ", the last: ", a.last_error);
  }
  // A new endpoint's first call may do one-time work (say, making its
  // metrics): those calls apart from the others.
  md += "\nFirst call of an endpoint against the other calls:";
  for (size_t i = 0; i < modes.size(); ++i) {
    const ChurnMode& m = modes[i];
    const LatencyHistogram& f = m.first_latency;
    const LatencyHistogram& o = m.other_latency;
    absl::StrAppendFormat(&md,
                          "%s %s %s first calls (p50 %.2f µs, p99 %.2f µs), "
                          "the others' p99.9 %.2f µs",
                          i == 0 ? "" : ";", m.name, Thousands(f.count()),
                          Us(f, 50), Us(f, 99), Us(o, 99.9));
  }
  md += ".\n";
  report.markdown = std::move(md);
  report.curve_csv = CurveCsv(modes);
  report.goals = GoalRows(modes);
  return report;
}

}  // namespace mesh::bench
