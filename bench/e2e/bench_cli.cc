#include "bench/e2e/bench_cli.h"

#include <errno.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace mesh::bench {

namespace {

[[noreturn]] void PrintAndExit(absl::string_view message, int status) {
  std::fprintf(stderr, "%s: %.*s\n", program_invocation_short_name,
               static_cast<int>(message.size()), message.data());
  std::exit(status);
}

}  // namespace

void Die(absl::string_view message) { PrintAndExit(message, 1); }

void DieOfFlags(absl::string_view message) {
  PrintAndExit(message, tools::kBadFlagsExitCode);
}

void ParseFlagsOrDie(int argc, char** argv, const FlagTable& flags) {
  if (absl::Status s = tools::ParseFlags(argc, argv, flags); !s.ok()) {
    DieOfFlags(s.message());
  }
}

void WriteResultsOrDie(
    const std::string& dir,
    const std::vector<std::pair<std::string, std::string>>& files) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) Die(absl::StrCat("cannot create ", dir, ": ", error.message()));
  for (const auto& [name, text] : files) {
    const std::string path = absl::StrCat(dir, "/", name);
    FILE* f = std::fopen(path.c_str(), "w");
    const bool written =
        f != nullptr &&
        std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (f == nullptr || std::fclose(f) != 0 || !written) {
      Die(absl::StrCat("cannot write ", path));
    }
    std::printf("wrote %s\n", path.c_str());
  }
}

std::string Thousands(int64_t v) {
  const std::string digits = absl::StrCat(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string Verdict(bool met, absl::string_view how_far) {
  return met ? "met" : absl::StrCat("**missed** by ", how_far);
}

MarkdownTable::MarkdownTable(std::vector<std::string> header)
    : header_(std::move(header)) {}

void MarkdownTable::AddRow(std::vector<std::string> cells) {
  cells.resize(std::max(cells.size(), header_.size()));
  rows_.push_back(std::move(cells));
}

std::string MarkdownTable::ToString() const {
  std::string out = absl::StrCat("| ", absl::StrJoin(header_, " | "), " |\n|");
  for (size_t i = 0; i < header_.size(); ++i) out += "---|";
  out += "\n";
  for (const std::vector<std::string>& row : rows_) {
    absl::StrAppend(&out, "| ", absl::StrJoin(row, " | "), " |\n");
  }
  return out;
}

}  // namespace mesh::bench
