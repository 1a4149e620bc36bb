// What every end-to-end benchmark program needs around its measurement: a
// fatal error, its flags parsed into a struct (by the tools' parser,
// tools/common/flag_parser.h), the result files under `--out`, and Markdown
// tables for docs/benchmarks.md.
//
//   struct Flags { std::string out = "results"; int calls = 100; } f;
//   ParseFlagsOrDie(argc, argv, {{"out", "DIR", TextFlag(&f.out)},
//                                {"calls", "N", IntFlag(&f.calls)}});
//   WriteResultsOrDie(f.out, {{"x.csv", csv}, {"x.md", table.ToString()}});
//
// Thread-compatible; meant for a program's main thread.
#ifndef MESH_BENCH_E2E_BENCH_CLI_H_
#define MESH_BENCH_E2E_BENCH_CLI_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "tools/common/flag_parser.h"

namespace mesh::bench {

// Prints "<program>: <message>" to stderr and exits 1.
[[noreturn]] void Die(absl::string_view message);

// The same, exiting 2 (tools::kBadFlagsExitCode): for flags that are wrong
// together or out of range.
[[noreturn]] void DieOfFlags(absl::string_view message);

// The flag table and setters of the tools, which the benchmarks share.
using tools::ChoiceListFlag;
using tools::FlagTable;
using tools::IntFlag;
using tools::IntListFlag;
using tools::Lowest;
using tools::RealFlag;
using tools::TextFlag;

// Applies argv through `flags` (tools::ParseFlags: `--name value` or
// `--name=value`); on an unknown flag, a missing or malformed value, dies
// naming the flag (DieOfFlags).
void ParseFlagsOrDie(int argc, char** argv, const FlagTable& flags);

// Writes each (file name, text) into `dir` (created if missing) and prints
// "wrote <path>" for each; dies naming the path if one cannot be written.
void WriteResultsOrDie(
    const std::string& dir,
    const std::vector<std::pair<std::string, std::string>>& files);

// 1234567 -> "1,234,567".
std::string Thousands(int64_t v);

// "met" or "missed by <how far>", with `how_far` already formatted.
std::string Verdict(bool met, absl::string_view how_far);

// A GitHub-flavoured Markdown table, built row by row.
class MarkdownTable {
 public:
  explicit MarkdownTable(std::vector<std::string> header);
  // A row with fewer cells than the header is padded with empty ones.
  void AddRow(std::vector<std::string> cells);
  // Header, separator and rows, each line ending in '\n'.
  std::string ToString() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace mesh::bench

#endif  // MESH_BENCH_E2E_BENCH_CLI_H_
