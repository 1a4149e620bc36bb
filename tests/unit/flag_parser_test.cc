// The tools' and benchmarks' flag parser (tools/common/flag_parser.h): both
// value syntaxes, switches, repeatable flags, positional arguments, every
// error naming its flag, the typed setters' ranges and the --help list.
#include "tools/common/flag_parser.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mesh::tools {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Parses `args` (argv[0] added) through `table`: the error message, or ""
// when parsing succeeded.
std::string ErrorOf(const FlagTable& table, std::vector<const char*> args,
                    const PositionalSetter& positional = nullptr) {
  args.insert(args.begin(), "prog");
  absl::Status s =
      ParseFlags(static_cast<int>(args.size()), args.data(), table, positional);
  if (s.ok()) return "";
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  return std::string(s.message());
}

struct Values {
  std::string name;
  int count = 0;
  bool verbose = false;
  bool help = false;
  std::vector<std::string> tags;
};

FlagTable TableFor(Values* v) {
  return {
      {"name", "TEXT", TextFlag(&v->name), "a name"},
      {"count", "N", IntFlag(&v->count, 1, 10, "must be 1..10"), "how many"},
      {"verbose", "", SwitchFlag(&v->verbose), "say more"},
      {"tag", "T",
       [v](absl::string_view t) {
         v->tags.emplace_back(t);
         return absl::OkStatus();
       },
       "repeatable"},
      {"help", "", SwitchFlag(&v->help), "this text"},
  };
}

TEST(ParseFlags, BothValueSyntaxesAndSwitches) {
  Values v;
  EXPECT_EQ(ErrorOf(TableFor(&v), {"--name", "a b", "--count=3", "--verbose"}),
            "");
  EXPECT_EQ(v.name, "a b");
  EXPECT_EQ(v.count, 3);
  EXPECT_TRUE(v.verbose);
}

TEST(ParseFlags, ValuesMayBeEmptyOrLookLikeFlags) {
  Values v;
  EXPECT_EQ(ErrorOf(TableFor(&v), {"--name="}), "");
  EXPECT_EQ(v.name, "");
  EXPECT_EQ(ErrorOf(TableFor(&v), {"--name", "--count"}), "");
  EXPECT_EQ(v.name, "--count");
  EXPECT_EQ(ErrorOf(TableFor(&v), {"--name=x=y"}), "");
  EXPECT_EQ(v.name, "x=y");
}

TEST(ParseFlags, ARepeatedFlagRunsItsSetterEachTime) {
  Values v;
  EXPECT_EQ(ErrorOf(TableFor(&v),
                    {"--tag", "a", "--count", "2", "--tag=b", "--count=5"}),
            "");
  EXPECT_THAT(v.tags, ElementsAre("a", "b"));
  EXPECT_EQ(v.count, 5);  // the last one
}

TEST(ParseFlags, DashHIsHelpOnlyWithAHelpFlag) {
  Values v;
  EXPECT_EQ(ErrorOf(TableFor(&v), {"-h"}), "");
  EXPECT_TRUE(v.help);
  std::string name;
  EXPECT_EQ(ErrorOf({{"name", "TEXT", TextFlag(&name)}}, {"-h"}),
            "unexpected argument '-h'");
}

TEST(ParseFlags, ErrorsNameTheFlag) {
  Values v;
  const FlagTable table = TableFor(&v);
  EXPECT_EQ(ErrorOf(table, {"--nope"}), "unknown flag --nope");
  EXPECT_EQ(ErrorOf(table, {"--nope=1"}), "unknown flag --nope");
  EXPECT_EQ(ErrorOf(table, {"--=1"}), "unknown flag --");
  EXPECT_EQ(ErrorOf(table, {"--count"}), "--count: needs a value");
  EXPECT_EQ(ErrorOf(table, {"--verbose=yes"}), "--verbose: takes no value");
  EXPECT_EQ(ErrorOf(table, {"--count", "11"}), "--count: must be 1..10");
  EXPECT_EQ(ErrorOf(table, {"--count=x"}), "--count: must be 1..10");
  EXPECT_EQ(ErrorOf(table, {"stray"}), "unexpected argument 'stray'");
  EXPECT_EQ(ErrorOf(table, {"--"}), "unexpected argument '--'");
  EXPECT_EQ(ErrorOf(table, {"-v"}), "unexpected argument '-v'");
}

TEST(ParseFlags, StopsAtTheFirstError) {
  Values v;
  EXPECT_EQ(ErrorOf(TableFor(&v), {"--count=2", "--nope", "--count=3"}),
            "unknown flag --nope");
  EXPECT_EQ(v.count, 2);
}

TEST(ParseFlags, ASetterWithoutAReasonGivesTheValue) {
  int n = 0;
  const FlagTable table = {{"concurrency", "N", IntFlag(&n)}};
  EXPECT_EQ(ErrorOf(table, {"--concurrency", "-1"}),
            "bad value for --concurrency: '-1'");
}

TEST(ParseFlags, PositionalArgumentsGoToTheirHandler) {
  Values v;
  std::vector<std::string> seen;
  auto positional = [&seen](absl::string_view arg) {
    if (arg == "bad") return absl::InvalidArgumentError("ARG 'bad' is bad");
    seen.emplace_back(arg);
    return absl::OkStatus();
  };
  EXPECT_EQ(ErrorOf(TableFor(&v), {"a", "--count", "2", "-b"}, positional), "");
  EXPECT_THAT(seen, ElementsAre("a", "-b"));
  EXPECT_EQ(ErrorOf(TableFor(&v), {"bad"}, positional), "ARG 'bad' is bad");
  EXPECT_EQ(ErrorOf(TableFor(&v), {"--"}, positional),
            "unexpected argument '--'");
}

TEST(ParseFlags, HeadingsAreNotFlags) {
  std::string name;
  const FlagTable table = {FlagHeading("Names:"),
                           {"name", "TEXT", TextFlag(&name)}};
  EXPECT_EQ(ErrorOf(table, {"--=x"}), "unknown flag --");
  EXPECT_EQ(ErrorOf(table, {"--name", "n"}), "");
}

TEST(FlagSetters, Text) {
  std::string s = "old";
  EXPECT_TRUE(TextFlag(&s)("").ok());
  EXPECT_EQ(s, "");
  absl::Status empty = TextFlag(&s, "needs an address")("");
  EXPECT_EQ(empty.message(), "needs an address");
  EXPECT_TRUE(TextFlag(&s, "needs an address")("h:1").ok());
  EXPECT_EQ(s, "h:1");
}

TEST(FlagSetters, IntegersKeepToTheirRangeAndType) {
  int i = 7;
  EXPECT_TRUE(IntFlag(&i)("0").ok());
  EXPECT_EQ(i, 0);
  EXPECT_FALSE(IntFlag(&i)("-1").ok());
  EXPECT_FALSE(IntFlag(&i)("2147483648").ok());
  EXPECT_FALSE(IntFlag(&i)("1.5").ok());
  EXPECT_FALSE(IntFlag(&i)("").ok());
  EXPECT_TRUE(IntFlag(&i, -5, 5)("-5").ok());
  EXPECT_EQ(i, -5);
  EXPECT_FALSE(IntFlag(&i, -5, 5)("6").ok());

  uint32_t u = 0;
  EXPECT_TRUE(IntFlag(&u, 1)("4294967295").ok());
  EXPECT_EQ(u, 4294967295u);
  EXPECT_FALSE(IntFlag(&u, 1)("4294967296").ok());
  EXPECT_FALSE(IntFlag(&u, 1)("0").ok());

  int64_t l = 0;
  EXPECT_TRUE(IntFlag(&l, 1)("9223372036854775807").ok());
  EXPECT_EQ(l, INT64_MAX);
  EXPECT_FALSE(IntFlag(&l, 1)("9223372036854775808").ok());
  EXPECT_EQ(IntFlag(&l, 1, kNoMax, "must be >= 1")("0").message(),
            "must be >= 1");
}

TEST(FlagSetters, RealsAreFiniteAndAboveOrFromZero) {
  double d = -1;
  EXPECT_TRUE(RealFlag(&d, Lowest::kZero)("0").ok());
  EXPECT_EQ(d, 0);
  EXPECT_FALSE(RealFlag(&d, Lowest::kAboveZero)("0").ok());
  EXPECT_TRUE(RealFlag(&d, Lowest::kAboveZero)("0.25").ok());
  EXPECT_EQ(d, 0.25);
  for (const char* bad : {"-1", "inf", "nan", "x", ""}) {
    EXPECT_FALSE(RealFlag(&d, Lowest::kZero)(bad).ok()) << bad;
  }
}

TEST(FlagSetters, DurationsCountUnits) {
  absl::Duration d;
  EXPECT_TRUE(
      DurationFlag(&d, absl::Seconds(1), Lowest::kAboveZero)("2.5").ok());
  EXPECT_EQ(d, absl::Milliseconds(2500));
  EXPECT_TRUE(
      DurationFlag(&d, absl::Milliseconds(1), Lowest::kAboveZero)("40").ok());
  EXPECT_EQ(d, absl::Milliseconds(40));
  EXPECT_TRUE(DurationFlag(&d, absl::Seconds(1), Lowest::kZero)("0").ok());
  EXPECT_EQ(d, absl::ZeroDuration());
  EXPECT_EQ(DurationFlag(&d, absl::Seconds(1), Lowest::kAboveZero, "> 0")("0")
                .message(),
            "> 0");
}

TEST(FlagSetters, Lists) {
  std::vector<int> ints = {9};
  EXPECT_TRUE(IntListFlag(&ints, 1)("1,8").ok());
  EXPECT_THAT(ints, ElementsAre(1, 8));
  EXPECT_FALSE(IntListFlag(&ints, 1)("1,0").ok());
  EXPECT_FALSE(IntListFlag(&ints, 1)("1,,2").ok());
  EXPECT_THAT(ints, ElementsAre(1, 8));  // untouched by a bad value

  std::vector<std::string> words;
  EXPECT_TRUE(
      ChoiceListFlag(&words, {"delta", "example"})("example,delta").ok());
  EXPECT_THAT(words, ElementsAre("example", "delta"));
  EXPECT_FALSE(ChoiceListFlag(&words, {"delta"})("delta,gamma").ok());
  EXPECT_THAT(words, ElementsAre("example", "delta"));
}

TEST(FlagSetters, NoteGivenOnlyOnSuccess) {
  int n = 0;
  bool given = false;
  FlagSetter set = NoteGiven(&given, IntFlag(&n, 1));
  EXPECT_FALSE(set("0").ok());
  EXPECT_FALSE(given);
  EXPECT_TRUE(set("1").ok());
  EXPECT_TRUE(given);
}

TEST(FlagHelp, ListsFlagsUnderHeadingsInColumns) {
  Values v;
  FlagTable table = {FlagHeading("Some:")};
  for (Flag& f : TableFor(&v)) table.push_back(std::move(f));
  table.insert(table.begin() + 3, FlagHeading("More:"));
  table.push_back({"a-very-long-flag-name", "VALUE", TextFlag(&v.name),
                   "first line\nsecond line"});
  table.push_back({"quiet", "", SwitchFlag(&v.verbose)});
  EXPECT_EQ(FlagHelp(table),
            "Some:\n"
            "  --name TEXT             a name\n"
            "  --count N               how many\n"
            "\n"
            "More:\n"
            "  --verbose               say more\n"
            "  --tag T                 repeatable\n"
            "  --help                  this text\n"
            "  --a-very-long-flag-name VALUE  first line\n"
            "                          second line\n"
            "  --quiet\n");
  EXPECT_THAT(FlagHelp({}), IsEmpty());
}

}  // namespace
}  // namespace mesh::tools
