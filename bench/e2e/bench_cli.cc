#include "bench/e2e/bench_cli.h"

#include <errno.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace mesh::bench {

void Die(absl::string_view message) {
  std::fprintf(stderr, "%s: %.*s\n", program_invocation_short_name,
               static_cast<int>(message.size()), message.data());
  std::exit(1);
}

FlagSetter TextFlag(std::string* out) {
  return [out](absl::string_view value) {
    *out = std::string(value);
    return true;
  };
}

FlagSetter IntFlag(int* out) {
  return [out](absl::string_view value) {
    int v = 0;
    if (!absl::SimpleAtoi(value, &v) || v < 0) return false;
    *out = v;
    return true;
  };
}

FlagSetter RealFlag(double* out) {
  return [out](absl::string_view value) {
    double v = 0;
    if (!absl::SimpleAtod(value, &v) || !(v >= 0)) return false;
    *out = v;
    return true;
  };
}

FlagSetter IntListFlag(std::vector<int>* out) {
  return [out](absl::string_view value) {
    std::vector<int> parsed;
    for (absl::string_view part : absl::StrSplit(value, ',')) {
      int v = 0;
      if (!absl::SimpleAtoi(part, &v) || v < 1) return false;
      parsed.push_back(v);
    }
    *out = std::move(parsed);
    return true;
  };
}

FlagSetter ChoiceListFlag(std::vector<std::string>* out,
                          std::vector<std::string> allowed) {
  return [out, allowed = std::move(allowed)](absl::string_view value) {
    std::vector<std::string> parsed;
    for (absl::string_view part : absl::StrSplit(value, ',')) {
      if (std::find(allowed.begin(), allowed.end(), part) == allowed.end()) {
        return false;
      }
      parsed.emplace_back(part);
    }
    *out = std::move(parsed);
    return true;
  };
}

void ParseFlagsOrDie(int argc, char** argv, const FlagTable& flags) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    absl::string_view value;
    if (size_t eq = arg.find('='); eq != absl::string_view::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      Die(absl::StrCat(arg, " needs a value"));
    }
    auto flag = std::find_if(flags.begin(), flags.end(),
                             [&](const auto& f) { return f.first == arg; });
    if (flag == flags.end()) Die(absl::StrCat("unknown flag ", arg));
    if (!flag->second(value)) {
      Die(absl::StrCat("bad value for ", arg, ": '", value, "'"));
    }
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
