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

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "mesh/mesh.h"

namespace mesh::bench {
namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "mesh_memory_bench: %s\n", message.c_str());
  std::exit(1);
}

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
  std::string counts = "1000,10000,100000";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) Die(absl::StrCat(arg, " needs a value"));
    const std::string value = argv[++i];
    if (arg == "--child") {
      int n = 0;
      if (!absl::SimpleAtoi(value, &n) || n < 1 || n > (1 << 24)) {
        Die(absl::StrCat("bad --child: ", value));
      }
      return Child(n);
    } else if (arg == "--out") {
      out = value;
    } else if (arg == "--endpoints") {
      counts = value;
    } else {
      Die(absl::StrCat("unknown flag ", arg));
    }
  }
  std::error_code error;
  const std::filesystem::path self =
      std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) Die(absl::StrCat("/proc/self/exe: ", error.message()));

  std::string csv =
      "endpoints,rss_start_bytes,rss_before_bytes,rss_discovered_bytes,"
      "rss_after_bytes,bytes_per_endpoint\n";
  std::printf("%9s %10s %11s %10s %11s %14s %10s\n", "endpoints", "fixed MiB",
              "before MiB", "after MiB", "B/endpoint", "in discovery",
              "in channel");
  double worst = 0;
  for (absl::string_view part : absl::StrSplit(counts, ',')) {
    int n = 0;
    if (!absl::SimpleAtoi(part, &n) || n < 1) {
      Die(absl::StrCat("bad --endpoints: ", counts));
    }
    const std::string command =
        absl::StrCat("'", self.string(), "' --child ", n);
    FILE* child = popen(command.c_str(), "r");
    if (child == nullptr) Die(absl::StrCat("cannot run ", command));
    char line[256] = {0};
    const bool got = std::fgets(line, sizeof(line), child) != nullptr;
    if (pclose(child) != 0 || !got) Die(absl::StrCat(command, " failed"));
    long long endpoints = 0, start = 0, before = 0, discovered = 0, after = 0;
    double per = 0;
    if (std::sscanf(line, "%lld,%lld,%lld,%lld,%lld,%lf", &endpoints, &start,
                    &before, &discovered, &after, &per) != 6) {
      Die(absl::StrCat("bad child output: ", line));
    }
    constexpr double kMiB = 1024.0 * 1024.0;
    // The split of B/endpoint: what StaticDiscovery keeps of the list, and
    // what the Channel (destination, balancer, per-endpoint state) adds.
    std::printf("%9lld %10.1f %11.1f %10.1f %11.0f %14.0f %10.0f\n", endpoints,
                (before - start) / kMiB, before / kMiB, after / kMiB, per,
                static_cast<double>(discovered - before) / endpoints,
                static_cast<double>(after - discovered) / endpoints);
    std::fflush(stdout);
    absl::StrAppend(&csv, line);
    if (per > worst) worst = per;
  }
  std::printf("\nworst bytes per endpoint: %.0f (goal <= 1024: %s)\n", worst,
              worst <= 1024 ? "met" : "missed");

  std::filesystem::create_directories(out, error);
  const std::string path = absl::StrCat(out, "/memory.csv");
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr || std::fwrite(csv.data(), 1, csv.size(), f) != csv.size() ||
      std::fclose(f) != 0) {
    Die(absl::StrCat("cannot write ", path));
  }
  std::printf("wrote %s\n", path.c_str());
  return 0;
}

}  // namespace
}  // namespace mesh::bench

int main(int argc, char** argv) { return mesh::bench::Main(argc, argv); }
