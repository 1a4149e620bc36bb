// mesh_admin_bench: what the admin page costs the calls of its process.
//
// One process: two echo backends on 127.0.0.1 and two Meshes over them,
// one without the admin page and one serving it on 127.0.0.1:0. Each
// round measures `--calls` sequential calls (one in flight), interleaved:
//   none   through the Mesh without the page
//   idle   through the Mesh with the page, nobody looking
//   open   the same, while one "browser" looks: it fetches /describe and
//          /metrics every 2 s, as the page does, and keeps a live tap
//          stream matching every call open and read (reopened when it
//          ends, as the page does). The stream writes a batch at most every
//          100 ms of what its subscription's buffer (256 events) holds; at
//          this rate of calls most events are dropped and counted, as they
//          would be for a real browser.
// The order of the three turns from round to round. Ratios of p50 are
// taken per round against none; the report gives their medians. Goals: open
// ≤ 1.05× none (the page closed); idle costs nothing measurable. Also reports
// the threads and the CPU the idle page uses while no call is made.
//
//   mesh_admin_bench --out results/ [--calls 2000] [--rounds 7]
//
// Writes admin.csv, admin.md and admin_goals.md into --out.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bench/e2e/bench_cli.h"
#include "bench/e2e/latency_stats.h"
#include "bench/e2e/sequential_calls.h"
#include "mesh/mesh.h"
#include "tools/common/echo_backend.h"
#include "tools/common/process_stats.h"

namespace mesh::bench {
namespace {

constexpr char kTarget[] = "echo.bench:7000";

// Connects to "127.0.0.1:port"; -1 if it cannot.
int Connect(const std::string& address) {
  const size_t colon = address.rfind(':');
  int port = 0;
  if (!absl::SimpleAtoi(address.substr(colon + 1), &port)) return -1;
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &in.sin_addr);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&in), sizeof(in)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends a GET of `target` and reads until the server closes, `stop` is
// raised, or `timeout` passes; returns the bytes read.
size_t Fetch(const std::string& address, const std::string& target,
             const std::atomic<bool>& stop, absl::Duration timeout) {
  const int fd = Connect(address);
  if (fd < 0) return 0;
  const std::string request = absl::StrCat(
      "GET ", target, " HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
  (void)send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  const absl::Time until = absl::Now() + timeout;
  size_t total = 0;
  char buffer[16384];
  while (!stop.load() && absl::Now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    total += static_cast<size_t>(n);
  }
  close(fd);
  return total;
}

// One browser on the page: the page's polls and a live tap stream.
class Browser {
 public:
  explicit Browser(std::string address) : address_(std::move(address)) {
    polls_ = std::thread([this] {
      while (!stop_.load()) {
        bytes_ += Fetch(address_, "/describe", stop_, absl::Seconds(5));
        bytes_ += Fetch(address_, "/metrics", stop_, absl::Seconds(5));
        for (int i = 0; i < 20 && !stop_.load(); ++i) {
          absl::SleepFor(absl::Milliseconds(100));  // every 2 s
        }
      }
    });
    tap_ = std::thread([this] {
      while (!stop_.load()) {
        bytes_ += Fetch(address_, "/tap?limit=1000", stop_, absl::Hours(1));
      }
    });
  }
  ~Browser() {
    stop_.store(true);
    polls_.join();
    tap_.join();
  }
  uint64_t bytes() const { return bytes_.load(); }

 private:
  const std::string address_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> bytes_{0};
  std::thread polls_, tap_;
};

int Main(int argc, char** argv) {
  std::string out = "results";
  int calls = 2000, rounds = 7, warmup = 500;
  ParseFlagsOrDie(argc, argv,
                  {{"out", "DIR", TextFlag(&out)},
                   {"calls", "N", IntFlag(&calls)},
                   {"rounds", "N", IntFlag(&rounds)},
                   {"warmup", "N", IntFlag(&warmup)}});
  if (calls < 1 || rounds < 1) DieOfFlags("--calls and --rounds must be >= 1");

  EchoDestination destination = StartEchoDestination(kTarget, 2);
  const std::shared_ptr<StaticDiscovery>& discovery = destination.discovery;
  MeshOptions plain_options;
  plain_options.discovery = discovery;
  auto plain = Mesh::Create(plain_options);
  if (!plain.ok()) Die(plain.status().ToString());
  const int threads_without = tools::ThreadsOfThisProcess();
  MeshOptions admin_options = plain_options;
  admin_options.admin_address = "127.0.0.1:0";
  auto admin = Mesh::Create(admin_options);
  if (!admin.ok()) Die(admin.status().ToString());
  const int threads_with = tools::ThreadsOfThisProcess();
  const std::string address = (*admin)->AdminAddress();
  auto plain_channel = (*plain)->NewChannel(kTarget);
  auto admin_channel = (*admin)->NewChannel(kTarget);
  if (!plain_channel.ok() || !admin_channel.ok()) Die("channels");
  SequentialCalls(**plain_channel, warmup, "warmup");
  SequentialCalls(**admin_channel, warmup, "warmup");

  // The idle page's CPU: two seconds with no call and no browser.
  const double cpu_before = ProcessCpuSeconds();
  absl::SleepFor(absl::Seconds(2));
  const double idle_cpu_ms = (ProcessCpuSeconds() - cpu_before) * 1000;

  std::string csv = "round,variant,calls,ok,p50_ms,p99_ms\n";
  std::vector<double> idle_ratios, open_ratios, open_p99_ratios;
  uint64_t browser_bytes = 0;
  for (int r = 0; r < rounds; ++r) {
    // The three in an order that turns each round, so that none is always
    // first or last (the machine's drift would go to one of them).
    std::optional<LatencyStats> measured[3];
    for (int k = 0; k < 3; ++k) {
      const int v = (k + r) % 3;
      if (v == 0) measured[0] = SequentialCalls(**plain_channel, calls, "none");
      if (v == 1) measured[1] = SequentialCalls(**admin_channel, calls, "idle");
      if (v == 2) {
        auto browser = std::make_unique<Browser>(address);
        absl::SleepFor(absl::Milliseconds(200));  // its first fetches are in
        measured[2] = SequentialCalls(**admin_channel, calls, "open");
        browser_bytes += browser->bytes();
      }
    }
    const LatencyStats& none = *measured[0];
    const LatencyStats& idle = *measured[1];
    const LatencyStats& open = *measured[2];
    for (const LatencyStats* s : {&none, &idle, &open}) {
      absl::StrAppend(
          &csv, r, ",", s->name(), ",", s->calls(), ",", s->succeeded(), ",",
          absl::StrFormat("%.4f,%.4f", s->Percentile(50), s->Percentile(99)),
          "\n");
    }
    idle_ratios.push_back(idle.Percentile(50) / none.Percentile(50));
    open_ratios.push_back(open.Percentile(50) / none.Percentile(50));
    open_p99_ratios.push_back(open.Percentile(99) / none.Percentile(99));
    std::printf("round %d: p50 none %.3f, idle %.3f, open %.3f ms\n", r,
                none.Percentile(50), idle.Percentile(50), open.Percentile(50));
    std::fflush(stdout);
  }
  const double idle_p50 = Median(idle_ratios);
  const double open_p50 = Median(open_ratios);
  MarkdownTable table({"variant", "p50 over none", "p99 over none", "threads"});
  table.AddRow(
      {"none (no admin page)", "1", "1", absl::StrCat(threads_without)});
  table.AddRow({"idle (page served, nobody looking)",
                absl::StrFormat("**%.3f×**", idle_p50), "",
                absl::StrCat(threads_with)});
  table.AddRow({"open (one browser: polls, and a live tap matching every call)",
                absl::StrFormat("**%.3f×**", open_p50),
                absl::StrFormat("%.2f×", Median(open_p99_ratios)),
                absl::StrCat(threads_with, " + 2 while connected")});
  std::string md = absl::StrCat(
      table.ToString(), "\nMedians over ", rounds, " rounds of ", calls,
      " sequential calls per variant, interleaved in each round (their order "
      "turning from round to round). The idle "
      "page used ",
      absl::StrFormat("%.1f", idle_cpu_ms),
      " ms of CPU over 2 s with no call (the whole process); the browser "
      "read ",
      browser_bytes / 1024, " KiB over the rounds.\n");
  MarkdownTable goals({"goal", "measured", "verdict"});
  goals.AddRow(
      {"admin page: call p50 with a browser on the page and a live "
       "tap ≤ 1.05× without the page",
       absl::StrFormat("**%.3f×**", open_p50),
       Verdict(open_p50 <= 1.05, absl::StrFormat("%.3f×", open_p50 / 1.05))});
  goals.AddRow(
      {"admin page idle: nothing measurable (p50 within the "
       "machine's noise of none)",
       absl::StrFormat("**%.3f×**", idle_p50), "see text"});
  WriteResultsOrDie(out, {{"admin.csv", csv},
                          {"admin.md", md},
                          {"admin_goals.md", goals.ToString()}});
  std::fputs(md.c_str(), stdout);
  return 0;
}

}  // namespace
}  // namespace mesh::bench

int main(int argc, char** argv) { return mesh::bench::Main(argc, argv); }
