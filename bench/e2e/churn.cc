// mesh_churn_bench: call latency through mesh::Channel while discovery churns
// a 10,000-endpoint set (issue 6, item 4: "calls flowing while discovery
// applies 100 updates/s to a 10k-endpoint set: pick latency percentiles
// unchanged, no errors").
//
// What is timed is mesh's own per-call path, not a network: the Mesh gets an
// in-process Transport (MeshOptions::transport_factory) that answers every
// request at once, OK with a 16-byte body, on the caller's thread. A call
// goes through the public Channel::CallRaw, the route table (two profile
// routes, RE2 path match), the P2C Peak-EWMA pick over the 10,000 endpoints,
// the route and endpoint metrics and the tap hook (no tap active), and
// nothing else. Endpoints are 10.x.y.z:8080 with a "pod" label, weight 1;
// nothing listens there and nothing needs to.
//
// Churn modes, each with its own target and channel (same routes, same
// options); an update retires the `--k` oldest endpoints and adds `--k` new
// ones, so the set stays at `--endpoints`:
//   churn         Linkerd Destination API over real gRPC on 127.0.0.1: a
//                 DeltaDestination server (churn_destination.h) streams the
//                 initial set in one Add, then per update one Remove and one
//                 Add message. `--control_plane example` uses the example
//                 control plane (tools/mesh-control-plane) instead: each
//                 update is a SetConfig of the whole new set, which it diffs
//                 into the same two messages.
//   reset         StaticDiscovery, the whole new set as one Reset per update
//                 (state of the world, as xDS EDS and DNS deliver it).
//   static_delta  StaticDiscovery, Remove then Add per update: the churn mode
//                 without the gRPC stream (not in the defaults).
//   noise         a control, not churn (not in the defaults): no update at
//                 all, but at the same rate a thread copies and sorts a
//                 10,000-endpoint vector of its own twice (work of the size
//                 of two applies, touching nothing of the Mesh), on the
//                 quiet channel. What it does to the calls is what any such
//                 work in the process does, whatever mesh's data structures.
// Quiet phases call the churn mode's channel with no updates.
//
// Closed loop: `--threads` callers (default 1: on a 2-core machine that
// leaves the other core to the control path, as a service with CPU headroom
// would; with as many callers as cores, every update's CPU time comes out of
// the callers' time slices), each starting its next blocking call when the
// last one returned; every call timed with a steady clock (latencies in a
// log-linear histogram, < 0.8 % bucket error; max exact). Phases interleave:
// `--rounds` rounds of quiet then each churn mode, `--phase_seconds` each, so
// machine noise hits all alike; a churn phase sends `--rate` updates/s and
// is followed by a wait until every sent update was applied (the waits
// share 20 s in all, at most 5 s each).
// A wrapper around the discovery source (churn_discovery.h) counts the
// updates the Mesh applied, how long each apply took and how long after it
// was sent each update was visible to picks. To tell causes apart it also
// reports, per mode, the callers' CPU time and involuntary context switches,
// the machine's interrupt rates, and the first call of each endpoint apart
// from the others (a new endpoint's first call may do one-time work).
//
// Prints a table, the churn/quiet ratios and the apply figures; writes
// churn.csv and churn.md (a markdown table for docs) into `--out`.
//
//   mesh_churn_bench --out results/ [--endpoints 10000] [--rate 100] [--k 10]
//       [--threads 1] [--rounds 4] [--phase_seconds 5] [--warmup_seconds 1]
//       [--modes churn,reset] [--control_plane delta|example]
//       [--timeout_ms 5000]
//
// ~65 s with the defaults (up to ~85 s if the Mesh falls behind and the
// waits after the churn phases take their 20 s). Exits 1 if set-up fails or
// the run overruns its time bound.
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "bench/e2e/bench_cli.h"
#include "bench/e2e/churn_destination.h"
#include "bench/e2e/churn_discovery.h"
#include "bench/e2e/churn_histogram.h"
#include "bench/e2e/churn_report.h"
#include "mesh/mesh.h"
#include "tests/support/fake_transports.h"
#include "tools/mesh-control-plane/config.h"
#include "tools/mesh-control-plane/control_plane.h"

namespace mesh::bench {
namespace {

constexpr char kMethod[] = "/mesh.bench.Echo/Call";

struct Flags {
  std::string out = "results";
  int endpoints = 10000;
  double rate = 100;  // updates/s during churn phases
  int k = 10;         // endpoints replaced per update
  int threads = 1;    // closed-loop callers (see the header comment)
  int rounds = 4;
  double phase_seconds = 5;
  double warmup_seconds = 1;
  std::vector<std::string> modes = {"churn", "reset"};
  std::string control_plane = "delta";  // or "example"
  double timeout_ms = 5000;             // the profile route's timeout
};

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  std::vector<std::string> control_plane;
  ParseFlagsOrDie(
      argc, argv,
      {{"out", "DIR", TextFlag(&f.out)},
       {"endpoints", "N", IntFlag(&f.endpoints)},
       {"rate", "N", RealFlag(&f.rate, Lowest::kZero)},
       {"k", "N", IntFlag(&f.k)},
       {"threads", "N", IntFlag(&f.threads)},
       {"rounds", "N", IntFlag(&f.rounds)},
       {"phase_seconds", "SECONDS", RealFlag(&f.phase_seconds, Lowest::kZero)},
       {"warmup_seconds", "SECONDS",
        RealFlag(&f.warmup_seconds, Lowest::kZero)},
       {"timeout_ms", "MS", RealFlag(&f.timeout_ms, Lowest::kZero)},
       {"control_plane", "NAME",
        ChoiceListFlag(&control_plane, {"delta", "example"})},
       {"modes", "MODE,...",
        ChoiceListFlag(&f.modes,
                       {"churn", "reset", "static_delta", "noise"})}});
  if (control_plane.size() > 1)
    DieOfFlags("--control_plane is delta or example");
  if (!control_plane.empty()) f.control_plane = control_plane[0];
  if (f.endpoints < 2 || f.rate <= 0 || f.k < 1 || f.k >= f.endpoints ||
      f.threads < 1 || f.rounds < 1 || f.phase_seconds <= 0 ||
      f.timeout_ms <= 0 || f.endpoints > (1 << 22)) {
    DieOfFlags(
        "need --endpoints in [2, 4194304], --k in [1, endpoints), "
        "--rate, --threads, --rounds, --phase_seconds, --timeout_ms > 0");
  }
  return f;
}

// Endpoint i (from 1): 10.a.b.c:8080, unique below 2^24.
std::string AddressOf(int64_t i) {
  return absl::StrFormat("10.%d.%d.%d:8080", (i >> 16) & 255, (i >> 8) & 255,
                         i & 255);
}

Endpoint EndpointOf(int64_t i) {
  Endpoint e(AddressOf(i));
  e.labels["pod"] = absl::StrCat("churn-", i);
  e.protocol_hint = ProtocolHint::kHttp2;  // what the Linkerd source sets
  return e;
}

controlplane::EndpointSpec SpecOf(int64_t i) {
  controlplane::EndpointSpec e;
  e.address = AddressOf(i);
  e.labels["pod"] = absl::StrCat("churn-", i);
  return e;
}

// Two routes, so that matching is real work: the calls match the second.
controlplane::ProfileSpec ProfileOf(double timeout_ms) {
  controlplane::ProfileSpec p;
  controlplane::RouteSpec other;
  other.name = "other";
  other.path_regex = "/mesh\\.bench\\.Other/.*";
  other.method = "POST";
  controlplane::RouteSpec call = other;
  call.name = "call";
  call.path_regex = "/mesh\\.bench\\.Echo/.*";
  call.timeout_ms = static_cast<int64_t>(timeout_ms);
  p.routes = {other, call};
  return p;
}

// The same routes for StaticDiscovery.
ServiceConfig ServiceConfigOf(double timeout_ms) {
  ServiceConfig c;
  c.routes.push_back(RouteBuilder("other")
                         .Path("/mesh\\.bench\\.Other/.*")
                         .HttpMethod("POST")
                         .Build());
  c.routes.push_back(RouteBuilder("call")
                         .Path("/mesh\\.bench\\.Echo/.*")
                         .HttpMethod("POST")
                         .Timeout(absl::Milliseconds(timeout_ms))
                         .Build());
  return c;
}

// One target's endpoint indices, oldest first.
struct Window {
  std::deque<int64_t> live;
  int64_t next = 1;

  explicit Window(int n) {
    for (int i = 0; i < n; ++i) live.push_back(next++);
  }
  std::vector<int64_t> Retire(int k) {
    std::vector<int64_t> gone(live.begin(), live.begin() + k);
    live.erase(live.begin(), live.begin() + k);
    return gone;
  }
  std::vector<int64_t> Add(int k) {
    std::vector<int64_t> added;
    for (int i = 0; i < k; ++i) {
      live.push_back(next);
      added.push_back(next++);
    }
    return added;
  }
};

// The first few failed calls' messages, from any caller.
class ErrorLog {
 public:
  void Add(const std::string& mode, const absl::Status& status) {
    absl::MutexLock lock(&mu_);
    if (lines_.size() < 5) lines_.push_back(mode + ": " + status.ToString());
  }
  std::vector<std::string> lines() const {
    absl::MutexLock lock(&mu_);
    return lines_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::string> lines_ ABSL_GUARDED_BY(mu_);
};

// The index of endpoint "10.a.b.c:8080"; -1 for anything else.
int64_t IndexOf(const std::string& address) {
  int64_t parts[4] = {0, 0, 0, 0};
  int part = 0;
  for (char c : address) {
    if (c == '.' || c == ':') {
      if (++part == 4) break;
    } else if (c >= '0' && c <= '9') {
      parts[part] = parts[part] * 10 + (c - '0');
    } else {
      return -1;
    }
  }
  if (part != 4 || parts[0] != 10) return -1;
  return (parts[1] << 16) | (parts[2] << 8) | parts[3];
}

// The machine's interrupt counts so far, summed over CPUs.
struct Interrupts {
  int64_t tlb = 0, res = 0, cal = 0;
};
Interrupts ReadInterrupts() {
  Interrupts out;
  std::ifstream in("/proc/interrupts");
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view view = absl::StripLeadingAsciiWhitespace(line);
    int64_t* into = absl::StartsWith(view, "TLB:")   ? &out.tlb
                    : absl::StartsWith(view, "RES:") ? &out.res
                    : absl::StartsWith(view, "CAL:") ? &out.cal
                                                     : nullptr;
    if (into == nullptr) continue;
    for (absl::string_view field :
         absl::StrSplit(view.substr(4), ' ', absl::SkipEmpty())) {
      int64_t n = 0;
      if (!absl::SimpleAtoi(field, &n)) break;  // the description
      *into += n;
    }
  }
  return out;
}

// Involuntary context switches of the calling thread so far: the times the
// scheduler took its core away (a call running then waits for it back).
int64_t ThreadPreemptions() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_nivcsw;
}

// CPU time used so far by the calling thread, in seconds.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Runs `mode` for `seconds`: the callers, and the churn generator if the
// mode has one. Accumulates into `mode` if `measure`.
void RunPhase(ChurnMode& mode, const Flags& flags, double seconds, bool measure,
              ErrorLog* errors) {
  std::atomic<bool> stop{false};
  std::vector<LatencyHistogram> first(flags.threads);
  std::vector<LatencyHistogram> other(flags.threads);
  std::vector<int64_t> failed(flags.threads, 0);
  std::vector<double> cpu(flags.threads, 0);
  std::vector<int64_t> preempted(flags.threads, 0);
  int64_t sent = 0;
  const std::string request(64, 'x');
  CallOptions options;
  const Interrupts interrupts0 = ReadInterrupts();
  const int64_t began = NowNs();
  std::vector<std::thread> threads;
  for (int t = 0; t < flags.threads; ++t) {
    threads.emplace_back([&, t] {
      Channel& channel = *mode.channel;
      const double cpu0 = ThreadCpuSeconds();
      const int64_t preempted0 = ThreadPreemptions();
      while (!stop.load(std::memory_order_relaxed)) {
        const auto start = std::chrono::steady_clock::now();
        CallResult r = channel.CallRaw(kMethod, request, options);
        const auto end = std::chrono::steady_clock::now();
        const int64_t ns =
            std::chrono::duration_cast<std::chrono::nanoseconds>(end - start)
                .count();
        // After the timing: was this the endpoint's first call?
        const int64_t i = IndexOf(r.endpoint);
        const bool first_call =
            i >= 0 && static_cast<size_t>(i) < mode.seen->size() &&
            (*mode.seen)[i].exchange(1, std::memory_order_relaxed) == 0;
        (first_call ? first[t] : other[t]).Record(ns);
        if (!r.status.ok()) {
          ++failed[t];
          errors->Add(mode.name, r.status);
        }
      }
      cpu[t] = ThreadCpuSeconds() - cpu0;
      preempted[t] = ThreadPreemptions() - preempted0;
    });
  }
  if (mode.update) {
    threads.emplace_back([&] {
      const int64_t period = static_cast<int64_t>(1e9 / flags.rate);
      int64_t next = NowNs();
      while (!stop.load(std::memory_order_relaxed)) {
        mode.update();
        ++sent;
        next += period;
        const int64_t now = NowNs();
        if (now > next + period) {
          next = now;  // behind: no burst to catch up; the rate shows it
        } else if (next > now) {
          std::this_thread::sleep_for(std::chrono::nanoseconds(next - now));
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  const int64_t ended = NowNs();
  const Interrupts interrupts1 = ReadInterrupts();
  for (std::thread& t : threads) t.join();
  if (!measure) return;
  mode.seconds += (ended - began) / 1e9;
  mode.updates_sent += sent;
  mode.tlb += interrupts1.tlb - interrupts0.tlb;
  mode.res += interrupts1.res - interrupts0.res;
  mode.cal += interrupts1.cal - interrupts0.cal;
  for (int t = 0; t < flags.threads; ++t) {
    mode.latency.Merge(first[t]);
    mode.latency.Merge(other[t]);
    mode.first_latency.Merge(first[t]);
    mode.other_latency.Merge(other[t]);
    mode.errors += failed[t];
    mode.caller_cpu_s += cpu[t];
    mode.preempted += preempted[t];
  }
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return absl::StrCat(a, " ", b, " ", c);
}

int Main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  const double planned_s =
      flags.warmup_seconds * (1 + flags.modes.size()) +
      flags.rounds * flags.phase_seconds * (1 + flags.modes.size());
  // Every wait below has its own limit; this bounds the whole run.
  const double bound_s = 60 + 2 * planned_s;
  std::thread([bound_s] {
    std::this_thread::sleep_for(std::chrono::duration<double>(bound_s));
    std::fprintf(stderr, "mesh_churn_bench: still running after %.0f s\n",
                 bound_s);
    std::_Exit(1);
  }).detach();
  const std::string load_before = LoadAverage();

  UpdateLedger ledger;
  auto source = std::make_shared<CountingSource>(&ledger);
  auto statics = StaticDiscovery::Create();
  const ServiceConfig static_config = ServiceConfigOf(flags.timeout_ms);

  // The churn mode's target, served over the Linkerd Destination API.
  const std::string churn_target = "churn.bench:80";
  Window churn_window(flags.endpoints);
  std::vector<controlplane::EndpointSpec> specs;
  for (int64_t i : churn_window.live) specs.push_back(SpecOf(i));
  std::unique_ptr<DeltaDestination> delta;
  std::unique_ptr<controlplane::ControlPlane> example;
  controlplane::Config example_config;
  int port = 0;
  if (flags.control_plane == "delta") {
    auto d = DeltaDestination::Start(churn_target, specs,
                                     ProfileOf(flags.timeout_ms));
    if (!d.ok()) Die(d.status().ToString());
    delta = *std::move(d);
    port = delta->port();
  } else {
    controlplane::TargetSpec& t = example_config.targets[churn_target];
    t.endpoints = specs;
    t.profile = ProfileOf(flags.timeout_ms);
    auto cp = controlplane::ControlPlane::Start("127.0.0.1:0", example_config);
    if (!cp.ok()) Die(cp.status().ToString());
    example = *std::move(cp);
    port = example->port();
  }
  LinkerdDiscoveryOptions linkerd_options;
  linkerd_options.address = absl::StrCat("127.0.0.1:", port);
  auto linkerd = NewLinkerdDiscovery(linkerd_options);
  if (!linkerd.ok()) Die(linkerd.status().ToString());
  source->Route(churn_target, *linkerd);

  std::vector<ChurnMode> modes;
  modes.reserve(1 + flags.modes.size());  // the noise update points into it
  {
    ChurnMode quiet;
    quiet.name = "quiet";
    quiet.description = "quiet (no updates)";
    quiet.target = churn_target;
    modes.push_back(std::move(quiet));
  }
  std::vector<Endpoint> noise_set;
  for (int i = 1; i <= flags.endpoints; ++i) noise_set.push_back(EndpointOf(i));
  for (const std::string& name : flags.modes) {
    ChurnMode m;
    m.name = name;
    m.target =
        name == "churn" || name == "noise" ? churn_target : name + ".bench:80";
    if (name == "noise") {
      m.description =
          "noise (control): no updates; a copy and sort of a 10k-endpoint "
          "vector per tick";
      modes.push_back(std::move(m));
      ChurnMode* self = &modes.back();
      self->update = [&noise_set, self] {
        // Twice, as a churn update is two messages to apply.
        for (int twice = 0; twice < 2; ++twice) {
          const int64_t began = NowNs();
          std::vector<Endpoint> copy = noise_set;
          std::sort(copy.begin(), copy.end(),
                    [](const Endpoint& a, const Endpoint& b) {
                      return a.address > b.address;
                    });
          self->work_ns.Record(NowNs() - began);
        }
      };
      continue;
    }
    if (name == "churn") {
      m.description =
          flags.control_plane == "delta"
              ? absl::StrFormat(
                    "churn: Linkerd Destination stream, Remove %d + Add %d "
                    "per update",
                    flags.k, flags.k)
              : absl::StrFormat(
                    "churn: example control plane (whole-config diff), "
                    "Remove %d + Add %d per update",
                    flags.k, flags.k);
      if (delta != nullptr) {
        m.update = [&, k = flags.k] {
          std::vector<std::string> remove;
          for (int64_t i : churn_window.Retire(k)) {
            remove.push_back(AddressOf(i));
          }
          std::vector<controlplane::EndpointSpec> add;
          for (int64_t i : churn_window.Add(k)) add.push_back(SpecOf(i));
          ledger.Sent(churn_target, add.back().address, NowNs());
          delta->Push(remove, add);
        };
      } else {
        m.update = [&, k = flags.k] {
          churn_window.Retire(k);
          std::vector<controlplane::EndpointSpec>& e =
              example_config.targets[churn_target].endpoints;
          e.erase(e.begin(), e.begin() + k);
          for (int64_t i : churn_window.Add(k)) e.push_back(SpecOf(i));
          ledger.Sent(churn_target, e.back().address, NowNs());
          example->SetConfig(example_config);
        };
      }
    } else {
      // StaticDiscovery: its own window, kept as endpoints, oldest first.
      auto window = std::make_shared<std::deque<Endpoint>>();
      for (int i = 1; i <= flags.endpoints; ++i) {
        window->push_back(EndpointOf(i));
      }
      auto next = std::make_shared<int64_t>(flags.endpoints + 1);
      absl::Status s = statics->SetEndpoints(
          m.target, std::vector<Endpoint>(window->begin(), window->end()));
      if (s.ok()) s = statics->SetServiceConfig(m.target, static_config);
      if (!s.ok()) Die(s.ToString());
      source->Route(m.target, statics);
      const std::string target = m.target;
      const int k = flags.k;
      if (name == "reset") {
        m.description = absl::StrFormat(
            "reset: StaticDiscovery, Reset of the whole set (%d changed)", k);
        m.update = [&, window, next, target, k] {
          for (int i = 0; i < k; ++i) {
            window->pop_front();
            window->push_back(EndpointOf((*next)++));
          }
          std::vector<Endpoint> set(window->begin(), window->end());
          ledger.Sent(target, window->back().address, NowNs());
          absl::Status s = statics->SetEndpoints(target, std::move(set));
          if (!s.ok()) Die(absl::StrCat("reset update: ", s.ToString()));
        };
      } else {
        m.description = absl::StrFormat(
            "static_delta: StaticDiscovery, Remove %d + Add %d per update", k,
            k);
        m.update = [&, window, next, target, k] {
          std::vector<std::string> remove;
          std::vector<Endpoint> add;
          for (int i = 0; i < k; ++i) {
            remove.push_back(window->front().address);
            window->pop_front();
            window->push_back(EndpointOf((*next)++));
            add.push_back(window->back());
          }
          ledger.Sent(target, add.back().address, NowNs());
          absl::Status s =
              statics->Update(target, EndpointUpdate::Remove(remove));
          if (s.ok()) s = statics->Update(target, EndpointUpdate::Add(add));
          if (!s.ok()) Die(absl::StrCat("static update: ", s.ToString()));
        };
      }
    }
    modes.push_back(std::move(m));
  }

  MeshOptions mesh_options;
  mesh_options.discovery = source;
  // Answers every request at once, on the caller's thread: OK, 16 bytes.
  mesh_options.transport_factory = [] {
    return testing::NewInlineTransport([](const TransportRequest&) {
      TransportResponse response;
      response.http_status = 200;
      response.body.assign(16, 'y');
      return response;
    });
  };
  absl::StatusOr<std::unique_ptr<Mesh>> mesh = Mesh::Create(mesh_options);
  if (!mesh.ok()) Die(mesh.status().ToString());
  const int64_t setup_began = NowNs();
  for (ChurnMode& m : modes) {
    if (m.name != "quiet" && m.target == churn_target) {
      m.channel = modes[0].channel;  // churn and noise share quiet's channel
      m.seen = modes[0].seen;
      continue;
    }
    // Indices stay below this: the initial set plus k per update for at
    // most the time bound at the full rate.
    m.seen = std::make_shared<std::vector<std::atomic<uint8_t>>>(
        flags.endpoints + 1 +
        static_cast<size_t>(flags.k * flags.rate * bound_s));
    absl::StatusOr<std::unique_ptr<Channel>> channel =
        (*mesh)->NewChannel(m.target);
    if (!channel.ok()) Die(channel.status().ToString());
    m.channel = *std::move(channel);
  }
  for (const ChurnMode& m : modes) {
    absl::Status s = m.channel->WaitForEndpoints(absl::Seconds(20));
    if (!s.ok()) Die(absl::StrCat(m.target, ": ", s.ToString()));
    const absl::Time deadline = absl::Now() + absl::Seconds(20);
    while (true) {
      std::optional<ServiceConfig> config = m.channel->service_config();
      size_t endpoints = m.channel->EndpointStatsSnapshot().size();
      if (config.has_value() && config->routes.size() == 2 &&
          endpoints == static_cast<size_t>(flags.endpoints)) {
        break;
      }
      if (absl::Now() > deadline) {
        Die(absl::StrCat(m.target, ": no profile with 2 routes and ",
                         flags.endpoints, " endpoints after 20 s (", endpoints,
                         " endpoints, ", config ? config->routes.size() : 0,
                         " routes)"));
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
  const double setup_s = (NowNs() - setup_began) / 1e9;
  source->ClearStats();

  std::printf(
      "mesh_churn_bench: mesh's own per-call path (in-process transport "
      "answering at once: no network, no server)\n"
      "%d endpoints per target (ready in %.2f s), %d closed-loop caller "
      "threads, P2C, 2 routes; churn: %.0f updates/s of %d removed + %d "
      "added; %d rounds x %.1f s per mode: quiet%s%s; control plane: %s; "
      "load average %s\n",
      flags.endpoints, setup_s, flags.threads, flags.rate, flags.k, flags.k,
      flags.rounds, flags.phase_seconds, flags.modes.empty() ? "" : ", ",
      absl::StrJoin(flags.modes, ", ").c_str(), flags.control_plane.c_str(),
      load_before.c_str());
  std::fflush(stdout);

  ErrorLog errors;
  for (ChurnMode& m : modes) {
    // Quiet warms the channel it shares with churn and noise.
    if (&m != &modes[0] && m.channel == modes[0].channel) continue;
    ChurnMode warm;
    warm.name = m.name;
    warm.channel = m.channel;
    warm.seen = m.seen;
    RunPhase(warm, flags, flags.warmup_seconds, false, &errors);
  }
  // The updates sent near the end of a churn phase must be applied before
  // the next phase. The waits share 20 s in all (5 s at most each), so that a
  // Mesh that falls behind cannot stretch the run much: its backlog then
  // spills into the next phases, and a warning says so.
  int churn_phases = 0;
  for (const ChurnMode& m : modes) churn_phases += m.update ? flags.rounds : 0;
  const double drain_cap_s = std::min(5.0, 20.0 / std::max(churn_phases, 1));
  for (int round = 0; round < flags.rounds; ++round) {
    for (ChurnMode& m : modes) {
      const int64_t applied_before =
          m.update ? source->Stats(m.target).matched : 0;
      RunPhase(m, flags, flags.phase_seconds, true, &errors);
      if (!m.update) continue;
      m.applied_in_phase += source->Stats(m.target).matched - applied_before;
      const int64_t drain_began = NowNs();
      while (ledger.pending(m.target) > 0 &&
             NowNs() - drain_began < drain_cap_s * 1e9) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      m.drain_seconds += (NowNs() - drain_began) / 1e9;
      if (const int64_t left = ledger.pending(m.target); left > 0) {
        std::printf(
            "  warning: %lld %s updates not applied %.1f s after the phase; "
            "they spill into the next phases\n",
            static_cast<long long>(left), m.name.c_str(), drain_cap_s);
      }
    }
    std::printf("  round %d of %d done\n", round + 1, flags.rounds);
    std::fflush(stdout);
  }
  const std::string load_after = LoadAverage();

  std::vector<ApplyStats> applied;
  for (const ChurnMode& m : modes) {
    const bool discovery = m.update && m.name != "noise";
    applied.push_back(discovery ? source->Stats(m.target) : ApplyStats{});
  }
  const ChurnReport report = ReportChurn(modes, applied, flags.threads);
  std::printf("\n%s\n%s\n", report.markdown.c_str(), report.goals.c_str());
  for (const std::string& line : errors.lines()) {
    std::printf("error: %s\n", line.c_str());
  }
  for (const ChurnMode& m : modes) {
    if (&m != &modes[0] && m.channel == modes[0].channel) continue;
    std::printf("%s: %zu endpoints at the end\n", m.target.c_str(),
                m.channel->EndpointStatsSnapshot().size());
  }
  std::printf("load average: %s before, %s after\n", load_before.c_str(),
              load_after.c_str());
  WriteResultsOrDie(flags.out, {{"churn.csv", report.csv},
                                {"churn_curve.csv", report.curve_csv},
                                {"churn.md", report.markdown},
                                {"churn_goals.md", report.goals}});
  for (ChurnMode& m : modes) m.channel.reset();
  mesh->reset();
  return 0;
}

}  // namespace
}  // namespace mesh::bench

int main(int argc, char** argv) { return mesh::bench::Main(argc, argv); }
