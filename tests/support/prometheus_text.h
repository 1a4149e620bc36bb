// A parser of the Prometheus text exposition format 0.0.4 for tests: it
// checks what Mesh::Metrics() writes independently of the code that writes
// it, and gives the tests the samples to look values up in.
//
// Stricter than Prometheus where a renderer of ours should be: every sample
// needs a TYPE line before it, a family's samples are contiguous, a series
// appears once, and a histogram's buckets are cumulative with a +Inf bucket
// equal to its _count.
//
//   absl::StatusOr<PrometheusText> text = ParsePrometheusText(rendered);
//   ASSERT_TRUE(text.ok()) << text.status();
//   std::optional<double> calls =
//       text->Value("route_request_total", {{"route", "GetBook"}});
//
// Thread-compatible.
#ifndef MESH_TESTS_SUPPORT_PROMETHEUS_TEXT_H_
#define MESH_TESTS_SUPPORT_PROMETHEUS_TEXT_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace mesh::testing {

using PrometheusLabels = std::map<std::string, std::string>;

struct PrometheusSample {
  std::string name;  // as written: "x_bucket" for a bucket of histogram "x"
  PrometheusLabels labels;  // unescaped
  double value = 0;
  int line = 0;  // 1-based
};

struct PrometheusFamily {
  std::string name;
  std::string type;  // counter, gauge, histogram, summary or untyped
  std::string help;  // unescaped; empty without a HELP line
  std::vector<PrometheusSample> samples;
};

struct PrometheusText {
  // The family named `name`, or nullptr.
  const PrometheusFamily* Family(absl::string_view name) const;
  // The samples named `sample_name` whose labels include every pair of
  // `subset`, in the order written.
  std::vector<const PrometheusSample*> Samples(
      absl::string_view sample_name, const PrometheusLabels& subset = {}) const;
  // The sum of the values of Samples(sample_name, subset), or nullopt if
  // there is none.
  std::optional<double> Value(absl::string_view sample_name,
                              const PrometheusLabels& subset = {}) const;

  std::vector<PrometheusFamily> families;  // in the order they appear
};

// The parsed text, or INVALID_ARGUMENT whose message starts with
// "line N: " and says what is wrong with line N.
absl::StatusOr<PrometheusText> ParsePrometheusText(absl::string_view text);

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_PROMETHEUS_TEXT_H_
