#include "tools/common/flag_parser.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "src/base/utf8.h"

namespace mesh::tools {
namespace {

// The help text of a flag starts in this column.
constexpr size_t kHelpColumn = 26;

const Flag* Find(const FlagTable& table, absl::string_view name) {
  if (name.empty()) return nullptr;  // headings are not flags
  for (const Flag& flag : table) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

absl::Status Unexpected(absl::string_view arg) {
  return absl::InvalidArgumentError(
      absl::StrCat("unexpected argument '", arg, "'"));
}

absl::Status Apply(const Flag& flag, absl::string_view value) {
  absl::Status s = flag.set(value);
  if (s.ok()) return s;
  if (s.message().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad value for --", flag.name, ": '", value, "'"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag.name, ": ", s.message()));
}

bool InRange(double v, Lowest lowest) {
  return std::isfinite(v) && (lowest == Lowest::kZero ? v >= 0 : v > 0);
}

template <typename Int>
FlagSetter IntSetter(Int* out, int64_t min, int64_t max, std::string why) {
  min = std::max<int64_t>(min, std::numeric_limits<Int>::min());
  max = std::min<int64_t>(max, std::numeric_limits<Int>::max());
  return [out, min, max, why = std::move(why)](absl::string_view value) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(value, &v) || v < min || v > max) {
      return absl::InvalidArgumentError(why);
    }
    *out = static_cast<Int>(v);
    return absl::OkStatus();
  };
}

}  // namespace

Flag FlagHeading(std::string text) {
  Flag heading;
  heading.help = std::move(text);
  return heading;
}

absl::Status ParseFlags(int argc, const char* const* argv,
                        const FlagTable& table,
                        const PositionalSetter& positional) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "-h" && Find(table, "help") != nullptr) arg = "--help";
    if (!absl::ConsumePrefix(&arg, "--")) {
      if (!positional) return Unexpected(arg);
      if (absl::Status s = positional(arg); !s.ok()) return s;
      continue;
    }
    if (arg.empty()) return Unexpected(argv[i]);
    absl::string_view name = arg, value;
    bool has_value = false;
    if (size_t eq = arg.find('='); eq != absl::string_view::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      has_value = true;
    }
    const Flag* flag = Find(table, name);
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
    }
    if (flag->argument.empty()) {
      if (has_value) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, ": takes no value"));
      }
    } else if (!has_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, ": needs a value"));
      }
      value = argv[++i];
    }
    if (absl::Status s = Apply(*flag, value); !s.ok()) return s;
  }
  return absl::OkStatus();
}

std::string FlagHelp(const FlagTable& table) {
  std::string out;
  for (const Flag& flag : table) {
    if (flag.name.empty()) {
      absl::StrAppend(&out, out.empty() ? "" : "\n", flag.help, "\n");
      continue;
    }
    std::string line = absl::StrCat("  --", flag.name);
    if (!flag.argument.empty()) absl::StrAppend(&line, " ", flag.argument);
    bool first = true;
    for (absl::string_view help : absl::StrSplit(flag.help, '\n')) {
      if (first && !help.empty()) {
        line.append(
            line.size() + 2 <= kHelpColumn ? kHelpColumn - line.size() : 2,
            ' ');
      } else if (!first) {
        line.assign(kHelpColumn, ' ');
      }
      absl::StrAppend(&out, line, help, "\n");
      line.clear();
      first = false;
    }
  }
  return out;
}

int BadFlags(absl::string_view tool, absl::string_view program,
             const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n(see %s --help)\n", std::string(tool).c_str(),
               internal::PrintableText(status.message()).c_str(),
               std::string(program).c_str());
  return kBadFlagsExitCode;
}

FlagSetter SwitchFlag(bool* on) {
  return [on](absl::string_view) {
    *on = true;
    return absl::OkStatus();
  };
}

FlagSetter TextFlag(std::string* out, std::string if_empty) {
  return [out, if_empty = std::move(if_empty)](absl::string_view value) {
    if (value.empty() && !if_empty.empty()) {
      return absl::InvalidArgumentError(if_empty);
    }
    *out = std::string(value);
    return absl::OkStatus();
  };
}

FlagSetter IntFlag(int* out, int64_t min, int64_t max, std::string why) {
  return IntSetter(out, min, max, std::move(why));
}

FlagSetter IntFlag(int64_t* out, int64_t min, int64_t max, std::string why) {
  return IntSetter(out, min, max, std::move(why));
}

FlagSetter IntFlag(uint32_t* out, int64_t min, int64_t max, std::string why) {
  return IntSetter(out, min, max, std::move(why));
}

FlagSetter RealFlag(double* out, Lowest lowest, std::string why) {
  return [out, lowest, why = std::move(why)](absl::string_view value) {
    double v = 0;
    if (!absl::SimpleAtod(value, &v) || !InRange(v, lowest)) {
      return absl::InvalidArgumentError(why);
    }
    *out = v;
    return absl::OkStatus();
  };
}

FlagSetter DurationFlag(absl::Duration* out, absl::Duration unit, Lowest lowest,
                        std::string why) {
  return [out, unit, lowest, why = std::move(why)](absl::string_view value) {
    double v = 0;
    if (!absl::SimpleAtod(value, &v) || !InRange(v, lowest)) {
      return absl::InvalidArgumentError(why);
    }
    *out = v * unit;
    return absl::OkStatus();
  };
}

FlagSetter IntListFlag(std::vector<int>* out, int min, std::string why) {
  return [out, min, why = std::move(why)](absl::string_view value) {
    std::vector<int> parsed;
    for (absl::string_view part : absl::StrSplit(value, ',')) {
      int v = 0;
      if (!absl::SimpleAtoi(part, &v) || v < min) {
        return absl::InvalidArgumentError(why);
      }
      parsed.push_back(v);
    }
    *out = std::move(parsed);
    return absl::OkStatus();
  };
}

FlagSetter ChoiceListFlag(std::vector<std::string>* out,
                          std::vector<std::string> allowed, std::string why) {
  return [out, allowed = std::move(allowed),
          why = std::move(why)](absl::string_view value) {
    std::vector<std::string> parsed;
    for (absl::string_view part : absl::StrSplit(value, ',')) {
      if (std::find(allowed.begin(), allowed.end(), part) == allowed.end()) {
        return absl::InvalidArgumentError(why);
      }
      parsed.emplace_back(part);
    }
    *out = std::move(parsed);
    return absl::OkStatus();
  };
}

FlagSetter NoteGiven(bool* given, FlagSetter set) {
  return [given, set = std::move(set)](absl::string_view value) {
    absl::Status s = set(value);
    if (s.ok()) *given = true;
    return s;
  };
}

}  // namespace mesh::tools
