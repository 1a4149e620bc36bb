// mesh_memory_bench: resident memory per endpoint of a Mesh (issue 6,
// item 6).
//
// For each N of `--endpoints` (default 1000,10000,100000) the program runs
// itself again as a child (`--child N`), so that each measurement starts
// from a fresh process. The child creates a Mesh over StaticDiscovery and
// a Channel to a one-endpoint target (paying the fixed costs: gRPC's
// threads, the transport), then reads RSS from /proc/self/statm; then it
// gives a second target N endpoints "10.x.y.z:8080" (nothing listens; the
// transport connects lazily, so no connection is made), opens a Channel to
// it, waits for the endpoints (WaitForEndpoints) and reads RSS again. The
// endpoint list is built after the first reading and handed to discovery,
// so what discovery keeps of it counts. malloc_trim(0) runs before each
// reading, so freed heap the allocator keeps does not count. Bytes per
// endpoint = (RSS after - RSS before) / N; goal <= 1 KiB. A third reading
// between SetEndpoints and NewChannel splits that into what discovery keeps
// and what the Channel adds. Prints a table; writes memory.csv into
// `--out`. scripts/bench.sh runs it.
//
//   mesh_memory_bench --out results/ [--endpoints 1000,10000,100000]
//
// Exits 1 if a child fails.
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "bench/e2e/bench_cli.h"
#include "mesh/mesh.h"

namespace mesh::bench {
namespace {

// Resident set size in bytes, after returning freed heap to the system.
int64_t RssBytes() {
  malloc_trim(0);
  long pages_total = 0;
  long pages_resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr ||
      std::fscanf(f, "%ld %ld", &pages_total, &pages_resident) != 2) {
    Die("cannot read /proc/self/statm");
  }
  std::fclose(f);
  return static_cast<int64_t>(pages_resident) * sysconf(_SC_PAGESIZE);
}

std::unique_ptr<Channel> OpenChannel(Mesh& mesh, const std::string& target) {
  absl::StatusOr<std::unique_ptr<Channel>> channel = mesh.NewChannel(target);
  if (!channel.ok()) Die(channel.status().ToString());
  absl::Status s = (*channel)->WaitForEndpoints(absl::Seconds(30));
  if (!s.ok()) Die(absl::StrCat(target, ": ", s.ToString()));
  return *std::move(channel);
}

// The measurement of one N, in this (fresh) process; prints one CSV row:
// endpoints,rss_start,rss_before,rss_discovered,rss_after,
// bytes_per_endpoint (rss_discovered: after SetEndpoints, before the
// Channel).
int Child(int n) {
  const int64_t rss_start = RssBytes();
  auto discovery = StaticDiscovery::Create();
  MeshOptions options;
  options.discovery = discovery;
  absl::StatusOr<std::unique_ptr<Mesh>> mesh = Mesh::Create(options);
  if (!mesh.ok()) Die(mesh.status().ToString());
  absl::Status s = discovery->SetEndpoints("warm:80", {{"10.0.0.1:8080"}});
  if (!s.ok()) Die(s.ToString());
  std::unique_ptr<Channel> warm = OpenChannel(**mesh, "warm:80");
  const int64_t rss_before = RssBytes();

  {
    std::vector<Endpoint> endpoints;
    endpoints.reserve(n);
    for (int i = 0; i < n; ++i) {
      endpoints.emplace_back(absl::StrFormat(
          "10.%d.%d.%d:8080", (i >> 16) & 255, (i >> 8) & 255, i & 255));
    }
    s = discovery->SetEndpoints("big:80", std::move(endpoints));
    if (!s.ok()) Die(s.ToString());
  }
  const int64_t rss_discovered = RssBytes();
  std::unique_ptr<Channel> big = OpenChannel(**mesh, "big:80");
  const int64_t rss_after = RssBytes();
  std::printf(
      "%d,%lld,%lld,%lld,%lld,%.1f\n", n, static_cast<long long>(rss_start),
      static_cast<long long>(rss_before),
      static_cast<long long>(rss_discovered), static_cast<long long>(rss_after),
      static_cast<double>(rss_after - rss_before) / n);
  return 0;
}

int Main(int argc, char** argv) {
  std::string out = "results";
  std::vector<int> counts = {1000, 10000, 100000};
  int child = 0;
  ParseFlagsOrDie(argc, argv,
                  {{"out", "DIR", TextFlag(&out)},
                   {"endpoints", "N,...", IntListFlag(&counts, 1)},
                   {"child", "N", IntFlag(&child)}});
  if (child > (1 << 24)) DieOfFlags("--child takes at most 16777216 endpoints");
  if (child > 0) return Child(child);
  std::error_code error;
  const std::filesystem::path self =
      std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) Die(absl::StrCat("/proc/self/exe: ", error.message()));

  std::string csv =
      "endpoints,rss_start_bytes,rss_before_bytes,rss_discovered_bytes,"
      "rss_after_bytes,bytes_per_endpoint\n";
  // The split of bytes per endpoint: what StaticDiscovery keeps of the
  // list, and what the Channel (destination, balancer, per-endpoint state)
  // adds.
  MarkdownTable table({"endpoints", "fixed cost (Mesh + 1 channel)",
                       "RSS before", "RSS after", "bytes / endpoint",
                       "of which discovery", "of which Channel"});
  double worst = 0;
  for (int n : counts) {
    const std::string command =
        absl::StrCat("'", self.string(), "' --child ", n);
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) Die(absl::StrCat("cannot run ", command));
    char line[256] = {0};
    const bool got = std::fgets(line, sizeof(line), pipe) != nullptr;
    if (pclose(pipe) != 0 || !got) Die(absl::StrCat(command, " failed"));
    long long endpoints = 0, start = 0, before = 0, discovered = 0, after = 0;
    double per = 0;
    if (std::sscanf(line, "%lld,%lld,%lld,%lld,%lld,%lf", &endpoints, &start,
                    &before, &discovered, &after, &per) != 6) {
      Die(absl::StrCat("bad child output: ", line));
    }
    auto mib = [](double bytes) {
      return absl::StrFormat("%.1f MiB", bytes / (1024.0 * 1024.0));
    };
    table.AddRow(
        {Thousands(endpoints), mib(before - start), mib(before), mib(after),
         absl::StrFormat("**%.0f**", per),
         absl::StrFormat("%.0f",
                         static_cast<double>(discovered - before) / endpoints),
         absl::StrFormat("%.0f",
                         static_cast<double>(after - discovered) / endpoints)});
    std::printf("%lld endpoints: %.0f bytes each\n", endpoints, per);
    std::fflush(stdout);
    absl::StrAppend(&csv, line);
    if (per > worst) worst = per;
  }
  MarkdownTable goals({"goal", "measured", "verdict"});
  goals.AddRow(
      {"memory: ≤ 1 KiB per endpoint (no connections)",
       absl::StrFormat("**%.0f B** at worst", worst),
       Verdict(worst <= 1024, absl::StrFormat("%.2f×", worst / 1024))});
  std::printf("\n%s\n%s\n", table.ToString().c_str(), goals.ToString().c_str());
  WriteResultsOrDie(out, {{"memory.csv", csv},
                          {"memory.md", table.ToString()},
                          {"memory_goals.md", goals.ToString()}});
  return 0;
}

}  // namespace
}  // namespace mesh::bench

int main(int argc, char** argv) { return mesh::bench::Main(argc, argv); }
