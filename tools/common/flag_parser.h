// The one command-line parser of the tools (mesh-call, mesh-tap,
// mesh-control-plane, mesh-echo-server) and the end-to-end benchmarks: a
// table of flags, each with a setter that checks its value and stores it.
// The --help list of flags is made from the same table.
//
//   struct { int64_t count = 1; bool json = false; bool help = false; } f;
//   const FlagTable table = {
//       {"count", "N", IntFlag(&f.count, 1, kNoMax, "must be an integer >= 1"),
//        "calls to make (default 1)"},
//       {"json", "", SwitchFlag(&f.json), "print one JSON object"},
//       {"help", "", SwitchFlag(&f.help), "this text"},
//   };
//   if (absl::Status s = ParseFlags(argc, argv, table); !s.ok()) {
//     return BadFlags("mesh-call", argv[0], s);  // prints why; returns 2
//   }
//
// The syntax, the same for every program:
//   --name VALUE, --name=VALUE  a flag that takes a value (maybe empty)
//   --name                      a switch, which takes none (--name=x fails)
//   -h                          --help, if the table has a "help" flag
//   other arguments             to the positional handler, if there is one
// A flag may be given again: its setter runs each time, so a flag that
// stores keeps its last value, and a repeatable one (its setter appends,
// e.g. mesh-tap's --label) keeps them all.
//
// Errors are INVALID_ARGUMENT, and every message names the flag:
//   "unknown flag --NAME"        "unexpected argument 'ARG'"
//   "--NAME: needs a value"      "--NAME: takes no value"
//   "--NAME: REASON"             a setter's error with message REASON
//   "bad value for --NAME: 'VALUE'"   a setter's error with no message
// The tools exit 2 for them (BadFlags), the benchmarks too.
//
// Thread-compatible: setters write through the pointers they hold.
#ifndef MESH_TOOLS_COMMON_FLAG_PARSER_H_
#define MESH_TOOLS_COMMON_FLAG_PARSER_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace mesh::tools {

// Checks one value of a flag and stores it. An error's message is the
// reason shown after "--NAME: " ("must be an integer >= 1"); an error with
// an empty message makes "bad value for --NAME: 'VALUE'".
using FlagSetter = std::function<absl::Status(absl::string_view value)>;

struct Flag {
  // Without the dashes: "count" is --count. Empty makes the entry a heading
  // of the --help list instead of a flag (FlagHeading).
  std::string name;
  // What --help calls the value ("N", "ADDR"). Empty: a switch, which takes
  // no value; its setter gets "".
  std::string argument;
  FlagSetter set;
  // For --help; "\n" starts another line.
  std::string help = {};
};
using FlagTable = std::vector<Flag>;

// A heading line ("Load:") in FlagHelp's list; not a flag.
Flag FlagHeading(std::string text);

// Takes an argument that does not start with "--" (mesh-tap's ADDR). Its
// error's message is shown as it is.
using PositionalSetter = std::function<absl::Status(absl::string_view arg)>;

// Applies argv[1..argc) through `table`, in order; stops at the first error.
// Without `positional`, any argument not starting with "--" is unexpected.
absl::Status ParseFlags(int argc, const char* const* argv,
                        const FlagTable& table,
                        const PositionalSetter& positional = nullptr);

// The table for --help: per flag "  --name ARG" and its help beside it from
// column 26 (further lines below it), headings with a blank line before.
std::string FlagHelp(const FlagTable& table);

// The exit status of every program for bad flags.
inline constexpr int kBadFlagsExitCode = 2;

// For a tool's main: prints "<tool>: <message>" and "(see <program>
// --help)" on stderr (the message made printable) and returns
// kBadFlagsExitCode.
int BadFlags(absl::string_view tool, absl::string_view program,
             const absl::Status& status);

// --- setters -----------------------------------------------------------------

inline constexpr int64_t kNoMax = std::numeric_limits<int64_t>::max();

// Sets *on; for a switch.
FlagSetter SwitchFlag(bool* on);

// The value as given; with `if_empty`, an empty value fails with that
// reason ("needs an address").
FlagSetter TextFlag(std::string* out, std::string if_empty = {});

// A whole number in min..max (and in the type's range), else `why`.
FlagSetter IntFlag(int* out, int64_t min = 0, int64_t max = kNoMax,
                   std::string why = {});
FlagSetter IntFlag(int64_t* out, int64_t min = 0, int64_t max = kNoMax,
                   std::string why = {});
FlagSetter IntFlag(uint32_t* out, int64_t min = 0, int64_t max = kNoMax,
                   std::string why = {});

// Where a number's range starts.
enum class Lowest { kZero, kAboveZero };

// A finite number >= 0 (kZero) or > 0, else `why`.
FlagSetter RealFlag(double* out, Lowest lowest, std::string why = {});

// A finite number of `unit`s, >= 0 or > 0: with absl::Seconds(1), "2.5"
// is 2.5 s.
FlagSetter DurationFlag(absl::Duration* out, absl::Duration unit, Lowest lowest,
                        std::string why = {});

// Comma-separated whole numbers >= `min`, e.g. "1,8", else `why`.
FlagSetter IntListFlag(std::vector<int>* out, int min, std::string why = {});

// Comma-separated words, each one of `allowed`, else `why`.
FlagSetter ChoiceListFlag(std::vector<std::string>* out,
                          std::vector<std::string> allowed,
                          std::string why = {});

// `set`, and *given = true when it succeeds: for "was --count given?".
FlagSetter NoteGiven(bool* given, FlagSetter set);

}  // namespace mesh::tools

#endif  // MESH_TOOLS_COMMON_FLAG_PARSER_H_
