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
// With `--sources xds` (default: static,xds) the endpoints come through
// mesh's xDS client instead: the parent runs mesh-control-plane's
// ControlPlane on 127.0.0.1 (in the parent, so that its memory does not
// count) with the two targets, the N endpoints in three zones (a locality
// each, as istiod sends them), and the child's Mesh has NewXdsDiscovery
// pointed at it. Its readings wait 200 ms for the client's thread to free
// the response it has just delivered; there is no middle reading (see
// XdsChild).
//
//   mesh_memory_bench --out results/ [--endpoints 1000,10000,100000]
//                     [--sources static,xds]
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
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/e2e/bench_cli.h"
#include "mesh/mesh.h"
#include "mesh/xds.h"
#include "tools/mesh-control-plane/config.h"
#include "tools/mesh-control-plane/control_plane.h"
#include "tools/mesh-control-plane/xds_resources.h"

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

// The address of the i-th endpoint of the big target.
std::string AddressOf(int i) {
  return absl::StrFormat("10.%d.%d.%d:8080", (i >> 16) & 255, (i >> 8) & 255,
                         i & 255);
}

// The xDS targets ("name:port") the parent's control plane serves.
constexpr char kXdsWarm[] = "warm.local:80";
constexpr char kXdsBig[] = "big.local:80";

// The control plane's config for one N: the warm target with one endpoint,
// the big one with N in three zones.
controlplane::Config XdsConfig(int n) {
  static const char* const kZones[] = {"zone-a", "zone-b", "zone-c"};
  controlplane::Config config;
  controlplane::EndpointSpec warm;
  warm.address = "10.0.0.1:8080";
  config.targets[kXdsWarm].endpoints.push_back(warm);
  std::vector<controlplane::EndpointSpec>& big =
      config.targets[kXdsBig].endpoints;
  big.reserve(n);
  for (int i = 0; i < n; ++i) {
    controlplane::EndpointSpec e;
    e.address = AddressOf(i);
    e.zone = kZones[i % 3];
    big.push_back(std::move(e));
  }
  return config;
}

std::unique_ptr<Channel> OpenChannel(Mesh& mesh, const std::string& target) {
  absl::StatusOr<std::unique_ptr<Channel>> channel = mesh.NewChannel(target);
  if (!channel.ok()) Die(channel.status().ToString());
  absl::Status s = (*channel)->WaitForEndpoints(absl::Seconds(30));
  if (!s.ok()) Die(absl::StrCat(target, ": ", s.ToString()));
  return *std::move(channel);
}

// The measurement of one N over StaticDiscovery, in this (fresh) process;
// prints one CSV row:
// endpoints,rss_start,rss_before,rss_discovered,rss_after,
// bytes_per_endpoint (rss_discovered: after SetEndpoints, before the
// Channel).
int StaticChild(int n) {
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
    for (int i = 0; i < n; ++i) endpoints.emplace_back(AddressOf(i));
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

// RssBytes once the xDS client's thread is done with the last response:
// it delivers the endpoints before it frees the parsed message (megabytes
// at 100,000 endpoints), so a reading right after a wait may hold both.
int64_t SettledRssBytes() {
  absl::SleepFor(absl::Milliseconds(200));
  return RssBytes();
}

// The same through the xDS client, from the parent's control plane on
// `port`. No middle reading (rss_discovered -1): the client fetches a
// cluster's endpoints only for a watcher, and a second watcher besides the
// Channel's changes what is measured (by up to ~95 bytes per endpoint, by
// the heap it leaves behind).
int XdsChild(int n, int port) {
  const int64_t rss_start = RssBytes();
  XdsOptions xds;
  xds.bootstrap_json =
      absl::StrCat(R"({"xds_servers": [{"server_uri": "127.0.0.1:)", port,
                   R"(", "channel_creds": [{"type": "insecure"}],)",
                   R"( "server_features": ["xds_v3"]}],)",
                   R"( "node": {"id": "mesh-memory-bench"}})");
  absl::StatusOr<std::shared_ptr<DiscoverySource>> source =
      NewXdsDiscovery(xds);
  if (!source.ok()) Die(source.status().ToString());
  MeshOptions options;
  options.discovery = *source;
  absl::StatusOr<std::unique_ptr<Mesh>> mesh = Mesh::Create(options);
  if (!mesh.ok()) Die(mesh.status().ToString());
  std::unique_ptr<Channel> warm =
      OpenChannel(**mesh, absl::StrCat("xds:///", kXdsWarm));
  const int64_t rss_before = SettledRssBytes();

  std::unique_ptr<Channel> big =
      OpenChannel(**mesh, absl::StrCat("xds:///", kXdsBig));
  const int64_t rss_after = SettledRssBytes();
  if (big->EndpointStatsSnapshot().size() != static_cast<size_t>(n)) {
    Die("the xDS channel does not have every endpoint");
  }
  std::printf(
      "%d,%lld,%lld,-1,%lld,%.1f\n", n, static_cast<long long>(rss_start),
      static_cast<long long>(rss_before), static_cast<long long>(rss_after),
      static_cast<double>(rss_after - rss_before) / n);
  return 0;
}

int Main(int argc, char** argv) {
  std::string out = "results";
  std::vector<int> counts = {1000, 10000, 100000};
  std::vector<std::string> sources = {"static", "xds"};
  int child = 0;
  int xds_port = 0;
  ParseFlagsOrDie(
      argc, argv,
      {{"out", "DIR", TextFlag(&out)},
       {"endpoints", "N,...", IntListFlag(&counts, 1)},
       {"sources", "SOURCE,...", ChoiceListFlag(&sources, {"static", "xds"})},
       {"child", "N", IntFlag(&child)},
       {"xds_port", "PORT", IntFlag(&xds_port, 0, 65535)}});
  if (child > (1 << 24)) DieOfFlags("--child takes at most 16777216 endpoints");
  if (child > 0)
    return xds_port > 0 ? XdsChild(child, xds_port) : StaticChild(child);
  if (sources.empty()) DieOfFlags("--sources names none");
  std::error_code error;
  const std::filesystem::path self =
      std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) Die(absl::StrCat("/proc/self/exe: ", error.message()));

  std::string csv =
      "source,endpoints,rss_start_bytes,rss_before_bytes,rss_discovered_bytes,"
      "rss_after_bytes,bytes_per_endpoint\n";
  // The split of bytes per endpoint: what StaticDiscovery keeps of the
  // list, and what the Channel (destination, balancer, per-endpoint state)
  // adds.
  MarkdownTable table({"discovery", "endpoints",
                       "fixed cost (Mesh + 1 channel)", "RSS before",
                       "RSS after", "bytes / endpoint", "of which discovery",
                       "of which Channel"});
  MarkdownTable goals({"goal", "measured", "verdict"});
  for (const std::string& source : sources) {
    const bool xds = source == "xds";
    // xDS: the control plane lives here, so that the children's RSS holds
    // only the client's side.
    std::unique_ptr<controlplane::ControlPlane> cp;
    if (xds) {
      absl::StatusOr<std::unique_ptr<controlplane::ControlPlane>> started =
          controlplane::ControlPlane::Start("127.0.0.1:0", {});
      if (!started.ok()) Die(started.status().ToString());
      cp = *std::move(started);
    }
    double worst = 0;
    for (int n : counts) {
      if (xds) cp->SetConfig(XdsConfig(n));
      const std::string command =
          absl::StrCat("'", self.string(), "' --child ", n,
                       xds ? absl::StrCat(" --xds_port ", cp->port()) : "");
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
      // Per endpoint; "–" where the child had no middle reading.
      auto share = [&](long long from, long long to) {
        return discovered < 0
                   ? std::string("–")
                   : absl::StrFormat(
                         "%.0f", static_cast<double>(to - from) / endpoints);
      };
      table.AddRow({xds ? "xDS" : "static", Thousands(endpoints),
                    mib(before - start), mib(before), mib(after),
                    absl::StrFormat("**%.0f**", per), share(before, discovered),
                    share(discovered, after)});
      std::printf("%s, %lld endpoints: %.0f bytes each\n", source.c_str(),
                  endpoints, per);
      std::fflush(stdout);
      absl::StrAppend(&csv, source, ",", line);
      if (per > worst) worst = per;
    }
    goals.AddRow(
        {xds ? "memory, xDS: ≤ 1 KiB per endpoint (no connections)"
             : "memory: ≤ 1 KiB per endpoint (no connections)",
         absl::StrFormat("**%.0f B** at worst", worst),
         Verdict(worst <= 1024, absl::StrFormat("%.2f×", worst / 1024))});
  }
  std::printf("\n%s\n%s\n", table.ToString().c_str(), goals.ToString().c_str());
  WriteResultsOrDie(out, {{"memory.csv", csv},
                          {"memory.md", table.ToString()},
                          {"memory_goals.md", goals.ToString()}});
  return 0;
}

}  // namespace
}  // namespace mesh::bench

int main(int argc, char** argv) { return mesh::bench::Main(argc, argv); }
