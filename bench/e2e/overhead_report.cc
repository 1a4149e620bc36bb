#include "bench/e2e/overhead_report.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/e2e/bench_cli.h"
#include "bench/e2e/latency_stats.h"

namespace mesh::bench {
namespace {

// The median of `values` and their range; {0, 0, 0} when empty.
struct Spread {
  double median = 0, min = 0, max = 0;
};

Spread SpreadOf(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median =
      n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
  return {median, values.front(), values.back()};
}

// Per round: f(variant's round figure, raw gRPC's round figure).
template <typename F>
Spread PerRound(const std::vector<double>& variant,
                const std::vector<double>& raw, F f) {
  std::vector<double> out;
  for (size_t r = 0; r < std::min(variant.size(), raw.size()); ++r) {
    out.push_back(f(variant[r], raw[r]));
  }
  return SpreadOf(std::move(out));
}

double Ratio(double a, double b) { return b > 0 ? a / b : 0.0; }
double AddedUs(double a_ms, double b_ms) { return 1000.0 * (a_ms - b_ms); }

std::string Times(const Spread& s) {
  return absl::StrFormat("**%.3f×** (%.3f–%.3f)", s.median, s.min, s.max);
}

double Us(const LatencyStats& s, double p) { return 1000.0 * s.Percentile(p); }

}  // namespace

void OverheadSamples::AddRound(const std::vector<double>& latencies_ms,
                               int64_t ok, double wall, double cpu) {
  latency_ms.insert(latency_ms.end(), latencies_ms.begin(), latencies_ms.end());
  succeeded += ok;
  wall_s += wall;
  cpu_s += cpu;
  round_p50_ms.push_back(
      LatencyStats::From("", latencies_ms, ok).Percentile(50));
  round_calls_per_s.push_back(wall > 0 ? latencies_ms.size() / wall : 0.0);
}

OverheadReport ReportOverhead(
    const std::vector<OverheadVariant>& variants,
    std::map<int, std::vector<OverheadSamples>> samples,
    const std::string& setup) {
  // Index of a variant by name; -1 if absent.
  auto find = [&variants](const char* name) {
    for (size_t i = 0; i < variants.size(); ++i) {
      if (variants[i].name == name) return static_cast<int>(i);
    }
    return -1;
  };
  const int raw_i = find("grpc_raw"), mesh_i = find("mesh_1");
  const int many_i = find("mesh_many"), rr_i = find("grpc_rr_many");
  const int proxy_i = find("proxy_hop");
  const bool have_many = many_i >= 0 && rr_i >= 0;
  const bool have_proxy = proxy_i >= 0;

  OverheadReport report;
  report.csv =
      "variant,concurrency,calls,success_rate,p50_us,p90_us,p99_us,max_us,"
      "calls_per_s,cpu_us_per_call\n";
  report.ratios_csv =
      "concurrency,rounds,mesh_p50_over_raw,mesh_rate_over_raw,"
      "mesh_many_p50_over_grpc_rr,mesh_many_rate_over_grpc_rr,"
      "mesh_added_p50_us,proxy_added_p50_us,mesh_cpu_added_us,"
      "proxy_cpu_added_us\n";
  MarkdownTable table({"variant", "concurrency", "calls", "success", "p50",
                       "p90", "p99", "calls/s", "CPU per call"});
  MarkdownTable ratios(
      {"concurrency", "mesh p50 / raw", "mesh calls/s / raw",
       "many: mesh p50 / gRPC rr", "many: mesh calls/s / gRPC rr",
       "added p50: mesh, proxy", "added CPU per call: mesh, proxy"});
  MarkdownTable goals({"goal", "measured", "verdict"});
  auto us = [](double v) { return absl::StrFormat("%.1f µs", v); };
  auto signed_us = [](double v) { return absl::StrFormat("%+.1f µs", v); };
  for (auto& [c, by_variant] : samples) {
    std::vector<double> cpu_us;  // process CPU per call, pooled
    for (size_t v = 0; v < variants.size(); ++v) {
      OverheadSamples& s = by_variant[v];
      const double rate = s.wall_s > 0 ? s.latency_ms.size() / s.wall_s : 0.0;
      cpu_us.push_back(
          s.latency_ms.empty() ? 0.0 : 1e6 * s.cpu_s / s.latency_ms.size());
      // Moved out: the per-round figures below are all that is left.
      const LatencyStats st = LatencyStats::From(
          variants[v].name, std::move(s.latency_ms), s.succeeded);
      absl::StrAppendFormat(
          &report.csv, "%s,%d,%d,%.5f,%.1f,%.1f,%.1f,%.1f,%.1f,%.2f\n",
          st.name(), c, st.calls(), st.success_rate(), Us(st, 50), Us(st, 90),
          Us(st, 99), Us(st, 100), rate, cpu_us.back());
      table.AddRow({variants[v].label, absl::StrCat(c), Thousands(st.calls()),
                    absl::StrFormat("%.2f %%", 100.0 * st.success_rate()),
                    us(Us(st, 50)), us(Us(st, 90)), us(Us(st, 99)),
                    Thousands(static_cast<int64_t>(rate)), us(cpu_us.back())});
    }
    const OverheadSamples& raw = by_variant[raw_i];
    const OverheadSamples& mesh = by_variant[mesh_i];
    const Spread mesh_p50 =
        PerRound(mesh.round_p50_ms, raw.round_p50_ms, Ratio);
    const Spread mesh_rate =
        PerRound(mesh.round_calls_per_s, raw.round_calls_per_s, Ratio);
    const Spread mesh_added =
        PerRound(mesh.round_p50_ms, raw.round_p50_ms, AddedUs);
    Spread many_p50, many_rate, proxy_added;
    if (have_many) {
      const OverheadSamples& many = by_variant[many_i];
      const OverheadSamples& rr = by_variant[rr_i];
      many_p50 = PerRound(many.round_p50_ms, rr.round_p50_ms, Ratio);
      many_rate = PerRound(many.round_calls_per_s, rr.round_calls_per_s, Ratio);
    }
    if (have_proxy) {
      proxy_added =
          PerRound(by_variant[proxy_i].round_p50_ms, raw.round_p50_ms, AddedUs);
    }
    const double mesh_cpu_added = cpu_us[mesh_i] - cpu_us[raw_i];
    const double proxy_cpu_added =
        have_proxy ? cpu_us[proxy_i] - cpu_us[raw_i] : 0;
    auto optional = [](bool have, const std::string& text) {
      return have ? text : std::string();
    };
    absl::StrAppendFormat(
        &report.ratios_csv, "%d,%d,%.4f,%.4f,%s,%s,%.1f,%s,%.2f,%s\n", c,
        raw.round_p50_ms.size(), mesh_p50.median, mesh_rate.median,
        optional(have_many, absl::StrFormat("%.4f", many_p50.median)),
        optional(have_many, absl::StrFormat("%.4f", many_rate.median)),
        mesh_added.median,
        optional(have_proxy, absl::StrFormat("%.1f", proxy_added.median)),
        mesh_cpu_added,
        optional(have_proxy, absl::StrFormat("%.2f", proxy_cpu_added)));
    ratios.AddRow(
        {absl::StrCat(c), Times(mesh_p50), Times(mesh_rate),
         have_many ? Times(many_p50) : "—", have_many ? Times(many_rate) : "—",
         absl::StrCat(signed_us(mesh_added.median), ", ",
                      have_proxy ? signed_us(proxy_added.median) : "—"),
         absl::StrCat(signed_us(mesh_cpu_added), ", ",
                      have_proxy ? signed_us(proxy_cpu_added) : "—")});
    goals.AddRow(
        {absl::StrFormat(
             "overhead, concurrency %d: mesh p50 ≤ 1.03 × raw gRPC p50", c),
         Times(mesh_p50),
         Verdict(
             mesh_p50.median <= 1.03,
             absl::StrFormat("%.1f points", 100 * (mesh_p50.median - 1.03)))});
    goals.AddRow(
        {absl::StrFormat(
             "overhead, concurrency %d: mesh calls/s ≥ 0.97 × raw gRPC's", c),
         Times(mesh_rate),
         Verdict(
             mesh_rate.median >= 0.97,
             absl::StrFormat("%.1f points", 100 * (0.97 - mesh_rate.median)))});
    if (have_proxy) {
      // Mesh adding no measurable p50 makes any proxy hop infinitely worse.
      const double proxy_over_mesh =
          mesh_added.median > 0 ? proxy_added.median / mesh_added.median
                                : HUGE_VAL;
      goals.AddRow(
          {absl::StrFormat("overhead, concurrency %d: the proxy hop's added "
                           "p50 ≥ 20 × mesh's",
                           c),
           mesh_added.median > 0
               ? absl::StrFormat("%+.1f / %+.1f µs = **%.1f×**",
                                 proxy_added.median, mesh_added.median,
                                 proxy_over_mesh)
               : absl::StrFormat("proxy %+.1f µs, mesh %+.1f µs (nothing "
                                 "measurable)",
                                 proxy_added.median, mesh_added.median),
           proxy_added.median <= 0
               ? "**missed**: the proxy added no measurable p50"
               : Verdict(proxy_over_mesh >= 20,
                         absl::StrFormat("%.1f×", 20 / proxy_over_mesh))});
    }
  }
  report.markdown = absl::StrCat(
      setup, table.ToString(),
      "\nRatios and added p50: the median over rounds of each round's "
      "figure against its baseline in the same round (range in brackets); "
      "the baseline is raw gRPC to one backend, and for \"many\" gRPC "
      "`round_robin` over the same backends as mesh. CPU: pooled over all "
      "rounds.\n\n",
      ratios.ToString());
  report.goals = goals.ToString();
  return report;
}

}  // namespace mesh::bench
