// mesh-call: sends gRPC unary calls through a mesh::Channel and reports how
// the mesh spread them, their latency and their statuses. Like grpcurl for a
// single call, like ghz for load; the endpoints come from a discovery source
// (Linkerd's Destination API, xDS, DNS, or a static list).
//
//   mesh-call --static 127.0.0.1:7001,127.0.0.1:7002 --target echo.local:7000
//       --method /demo.Echo/Say --count 1000 --concurrency 8
//   mesh-call --linkerd 127.0.0.1:8086 --target echo.local:7000
//   mesh-call --dns --dns-server 127.0.0.1:5353 --target db.internal:7000
//   mesh-call --xds-bootstrap bootstrap.json --target xds:///echo.local:7000
//       --method /demo.Echo/Say --rate 200 --duration 10 --deadline 100 --json
//
// See --help (flags.cc) for the flags and the exit status.

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#if MESH_CALL_HTTP
#include <curl/curl.h>

#include "mesh/curl.h"
#endif
#include "mesh/dns.h"
#include "mesh/mesh.h"
#include "mesh/xds.h"
#include "tools/common/signals.h"
#include "tools/common/tls_at_exit.h"
#include "tools/mesh-call/flags.h"
#include "tools/mesh-call/report.h"

namespace mesh::tools {
namespace {

// Drain limit without --deadline; with it, the deadline plus kDeadlineGrace
// (a call's callback can run a little after its deadline).
constexpr absl::Duration kDrainLimit = absl::Seconds(30);
constexpr absl::Duration kDeadlineGrace = absl::Seconds(5);

// The run's shared state: the in-flight count (with an optional cap), the
// finished calls, and the interrupt count from signals. The load loop blocks
// in it (Acquire, SleepUntil, WaitIdle); completion callbacks only take the
// lock briefly (Finish), since they must not block.
//
// Thread-safe.
class Run {
 public:
  // `limit`: most calls in flight; 0 for no cap.
  explicit Run(int64_t limit) : limit_(limit) {}

  // Takes an in-flight slot. False, taking none, when interrupted or when
  // `end` passes first.
  bool Acquire(absl::Time end) {
    mu_.LockWhenWithDeadline(absl::Condition(this, &Run::CanStart), end);
    bool ok = interrupts_ == 0 && absl::Now() < end && HasRoom();
    if (ok) {
      ++in_flight_;
      ++started_;
    }
    mu_.Unlock();
    return ok;
  }

  // A call started by a driver that keeps its own limit (--http's).
  void Started() {
    absl::MutexLock lock(&mu_);
    ++in_flight_;
    ++started_;
  }
  bool interrupted() const {
    absl::MutexLock lock(&mu_);
    return interrupts_ > 0;
  }

  // Waits until `t` (the open loop's schedule). False if interrupted.
  bool SleepUntil(absl::Time t) {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithDeadline(absl::Condition(this, &Run::Interrupted), t);
    return interrupts_ == 0;
  }

  // Records a call that started (or was scheduled) at `start`.
  void Finish(absl::Time start, const CallResult& result) {
    Finish(start, result.endpoint, result.status, /*http_status=*/0);
  }
  void Finish(absl::Time start, const std::string& endpoint,
              const absl::Status& status, int http_status) {
    CallRecord record;
    record.latency_ms = absl::ToDoubleMilliseconds(absl::Now() - start);
    record.endpoint = endpoint;
    record.code = status.code();
    record.http_status = http_status;
    const CallResult result{status, {}, {}, {}, endpoint};
    absl::MutexLock lock(&mu_);
    --in_flight_;
    if (closed_) return;
    ++interval_calls_[record.endpoint.empty() ? "(no endpoint)"
                                              : record.endpoint];
    interval_errors_ += record.code != absl::StatusCode::kOk;
    if (!result.status.ok()) {
      out_.error_samples.try_emplace(record.code,
                                     std::string(result.status.message()));
    }
    out_.records.push_back(std::move(record));
  }

  // Waits until no call is in flight, `deadline` passes, or a new interrupt
  // comes. True if none is in flight.
  bool WaitIdle(absl::Time deadline) {
    absl::MutexLock lock(&mu_);
    interrupts_at_drain_ = interrupts_;
    mu_.AwaitWithDeadline(absl::Condition(this, &Run::DrainOver), deadline);
    return in_flight_ == 0;
  }

  // Called from the signal thread; returns how many there have been.
  int Interrupt() {
    absl::MutexLock lock(&mu_);
    return ++interrupts_;
  }

  // Ends recording: later completions are counted as not finished.
  RunResult Close() {
    absl::MutexLock lock(&mu_);
    closed_ = true;
    out_.started = started_;
    out_.interrupted = interrupts_ > 0;
    return std::move(out_);
  }

  // Every `interval` until Close(), prints one line: each endpoint's share
  // of the calls that finished since the previous line. On its own thread.
  void ReportEvery(absl::Duration interval, absl::Time t0) {
    reporter_ = std::thread([this, interval, t0] {
      absl::MutexLock lock(&mu_);
      for (absl::Time next = t0 + interval;; next += interval) {
        mu_.AwaitWithDeadline(absl::Condition(&closed_), next);
        if (closed_) return;
        int64_t total = 0;
        for (const auto& [endpoint, n] : interval_calls_) total += n;
        std::string line =
            absl::StrFormat("[%6.1fs]", absl::ToDoubleSeconds(next - t0));
        for (const auto& [endpoint, n] : interval_calls_) {
          absl::StrAppendFormat(&line, "  %s %3.0f%%", endpoint,
                                100.0 * n / total);
        }
        absl::StrAppendFormat(&line, "   (%d calls, %d errors)", total,
                              interval_errors_);
        std::printf("%s\n", line.c_str());
        std::fflush(stdout);
        interval_calls_.clear();
        interval_errors_ = 0;
      }
    });
  }

  ~Run() {
    if (reporter_.joinable()) reporter_.join();
  }

  void Reserve(size_t n) {
    absl::MutexLock lock(&mu_);
    out_.records.reserve(n);
  }

 private:
  bool HasRoom() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return limit_ == 0 || in_flight_ < limit_;
  }
  bool Interrupted() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return interrupts_ > 0;
  }
  bool CanStart() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return HasRoom() || interrupts_ > 0;
  }
  bool DrainOver() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return in_flight_ == 0 || interrupts_ > interrupts_at_drain_;
  }

  const int64_t limit_;
  mutable absl::Mutex mu_;
  int64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t started_ ABSL_GUARDED_BY(mu_) = 0;
  int interrupts_ ABSL_GUARDED_BY(mu_) = 0;
  int interrupts_at_drain_ ABSL_GUARDED_BY(mu_) = 0;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  RunResult out_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> interval_calls_ ABSL_GUARDED_BY(mu_);
  int64_t interval_errors_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread reporter_;
};

// Starts one call; `start` is when it was due (the open loop's schedule).
void StartCall(Channel& channel, const CallFlags& flags,
               const CallOptions& options, absl::Time start,
               const std::shared_ptr<Run>& run) {
  channel.CallRawAsync(
      flags.method, flags.data, options,
      [run, start](CallResult result) { run->Finish(start, result); });
}

// The route_* series of `target` in Prometheus text `metrics`, without the
// histogram buckets, under a heading.
std::string RouteMetricsOf(const std::string& metrics,
                           const std::string& target) {
  std::string out = "\nper-route metrics (Mesh::Metrics()):\n";
  const std::string authority = absl::StrCat("authority=\"", target, "\"");
  for (absl::string_view line : absl::StrSplit(metrics, '\n')) {
    if (absl::StartsWith(line, "route_") &&
        absl::StrContains(line, authority) &&
        !absl::StrContains(line, "_bucket{")) {
      absl::StrAppend(&out, "  ", line, "\n");
    }
  }
  return out;
}

std::string DescribeMode(const CallFlags& f) {
  std::string amount =
      f.duration > absl::ZeroDuration()
          ? absl::StrCat("for ", absl::FormatDuration(f.duration))
          : absl::StrCat(f.count, f.count == 1 ? " call" : " calls");
  std::string deadline =
      f.deadline == absl::InfiniteDuration()
          ? "no deadline"
          : absl::StrCat("deadline ", absl::FormatDuration(f.deadline));
  std::string balancer =
      f.balancer == BalancerKind::kRoundRobin ? "round_robin" : "p2c";
  if (f.rate > 0) {
    std::string cap =
        f.concurrency_set
            ? absl::StrCat(", at most ", f.concurrency, " in flight")
            : "";
    return absl::StrFormat("open loop, %g calls/s%s, %s, %s, %s", f.rate, cap,
                           amount, deadline, balancer);
  }
  return absl::StrFormat("closed loop, %d in flight, %s, %s, %s", f.concurrency,
                         amount, deadline, balancer);
}

// Drives the load, waits for the calls in flight (bounded), and returns what
// happened.
RunResult Drive(Channel& channel, const CallFlags& flags,
                const std::shared_ptr<Run>& run) {
  CallOptions options;
  options.timeout = flags.deadline;
  options.metadata = flags.headers;
  const bool timed = flags.duration > absl::ZeroDuration();
  const int64_t count = timed ? INT64_MAX : flags.count;
  if (!timed) {
    run->Reserve(static_cast<size_t>(std::min<int64_t>(count, 1 << 16)));
  }

  const absl::Time t0 = absl::Now();
  const absl::Time end = timed ? t0 + flags.duration : absl::InfiniteFuture();
  if (flags.interval > absl::ZeroDuration())
    run->ReportEvery(flags.interval, t0);
  for (int64_t i = 0; i < count; ++i) {
    absl::Time start = t0;
    if (flags.rate > 0) {
      // Each call is due at t0 + i/rate whatever the completions; a loop
      // that falls behind starts the late calls at once.
      start = t0 + absl::Seconds(static_cast<double>(i) / flags.rate);
      if (start >= end || !run->SleepUntil(start)) break;
    }
    if (!run->Acquire(end)) break;
    if (flags.rate <= 0) start = absl::Now();
    StartCall(channel, flags, options, start, run);
  }

  absl::Duration limit = flags.deadline == absl::InfiniteDuration()
                             ? kDrainLimit
                             : flags.deadline + kDeadlineGrace;
  run->WaitIdle(absl::Now() + limit);
  RunResult result = run->Close();
  result.wall_seconds = absl::ToDoubleSeconds(absl::Now() - t0);
  return result;
}

#if MESH_CALL_HTTP
size_t Discard(char*, size_t size, size_t count, void*) { return size * count; }

// --http: plain HTTP requests through libcurl and a mesh::curl::Multi on
// this thread, closed or open loop as the gRPC calls are; their answers are
// counted, not kept.
RunResult DriveHttp(Channel& channel, const CallFlags& flags,
                    const std::string& body, const std::shared_ptr<Run>& run) {
  const std::string url =
      absl::StrCat("http://", flags.target, flags.http_path);
  curl_slist* headers = nullptr;
  for (const auto& [name, value] : flags.headers) {
    headers =
        curl_slist_append(headers, absl::StrCat(name, ": ", value).c_str());
  }
  curl::Request request;
  request.headers = headers;
  request.method = flags.http_method;
  request.write = {&Discard, nullptr};
  request.header = {&Discard, nullptr};
  request.body =
      body.empty() ? curl::Request::Body::kNone : curl::Request::Body::kBuffer;
  request.timeout = flags.deadline;
  std::vector<CURL*> handles, idle;
  auto handle = [&]() -> CURL* {
    if (!idle.empty()) {
      CURL* easy = idle.back();
      idle.pop_back();
      return easy;
    }
    CURL* easy = curl_easy_init();
    handles.push_back(easy);
    curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, flags.http_method.c_str());
    if (flags.http_method == "HEAD") curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
    if (headers != nullptr) curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    if (!body.empty()) {
      curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body.data());
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(body.size()));
    }
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Discard);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &Discard);
    return easy;
  };

  const bool timed = flags.duration > absl::ZeroDuration();
  const int64_t count = timed ? INT64_MAX : flags.count;
  const int64_t limit = flags.rate > 0
                            ? (flags.concurrency_set ? flags.concurrency : 0)
                            : flags.concurrency;
  const absl::Time t0 = absl::Now();
  const absl::Time end = timed ? t0 + flags.duration : absl::InfiniteFuture();
  if (flags.interval > absl::ZeroDuration()) {
    run->ReportEvery(flags.interval, t0);
  }
  RunResult result;
  {
    curl::Multi multi;
    int64_t started = 0, in_flight = 0;
    auto start_one = [&](absl::Time start) {
      CURL* easy = handle();
      run->Started();
      ++started;
      ++in_flight;
      multi.Add(channel, easy, request, [&, easy, start](curl::Result r) {
        --in_flight;
        idle.push_back(easy);
        run->Finish(start, r.endpoint, r.status,
                    static_cast<int>(r.http_status));
      });
    };
    auto due = [&](int64_t i) {
      return t0 + absl::Seconds(static_cast<double>(i) / flags.rate);
    };
    absl::Time drain_until = absl::InfiniteFuture();
    for (;;) {
      const absl::Time now = absl::Now();
      const bool more = started < count && now < end && !run->interrupted();
      if (more && flags.rate > 0) {
        // Each request is due at t0 + i/rate; late ones start at once.
        while (started < count && due(started) <= now && due(started) < end &&
               (limit == 0 || in_flight < limit)) {
          start_one(due(started));
        }
      } else if (more) {
        while (started < count && in_flight < limit) start_one(absl::Now());
      }
      if (!more) {
        if (in_flight == 0) break;
        if (drain_until == absl::InfiniteFuture()) {
          drain_until = now + (flags.deadline == absl::InfiniteDuration()
                                   ? kDrainLimit
                                   : flags.deadline + kDeadlineGrace);
        }
        if (now >= drain_until) break;
      }
      absl::Duration wait = absl::Milliseconds(100);
      if (more && flags.rate > 0 && started < count) {
        wait =
            std::min(wait, std::max(due(started) - now, absl::ZeroDuration()));
      }
      if (in_flight > 0) {
        multi.Poll(wait);
      } else {
        run->SleepUntil(now + wait);
      }
    }
    result = run->Close();
    // ~Multi cancels what is still in flight; the Run is closed to it.
  }
  for (CURL* easy : handles) curl_easy_cleanup(easy);
  curl_slist_free_all(headers);
  result.wall_seconds = absl::ToDoubleSeconds(absl::Now() - t0);
  result.http = true;
  return result;
}
#endif

int SetupFailed(absl::string_view what, const absl::Status& status,
                int exit_code = 1) {
  std::fprintf(stderr, "mesh-call: %s: %s\n", std::string(what).c_str(),
               status.ToString().c_str());
  return exit_code;
}

// Bad options (INVALID_ARGUMENT) come from the flags: exit 2, else 1.
int ExitCodeFor(const absl::Status& status) {
  return absl::IsInvalidArgument(status) ? 2 : 1;
}

absl::Status ReadFile(const std::string& path, std::string* bytes) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(std::strerror(errno));
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) bytes->append(buf, n);
  bool failed = std::ferror(f) != 0;
  int error = errno;
  std::fclose(f);
  if (failed) return absl::DataLossError(std::strerror(error));
  return absl::OkStatus();
}

// --tls-ca alone: TLS to every --static endpoint that verifies the server
// against the CA and, with --static-identity, checks that it carries that
// identity (as a DNS or URI SAN, the DNS one also sent as the server name),
// presenting no client certificate. Null with a client certificate (the
// Mesh's identity then serves endpoints that have a tls_identity).
std::shared_ptr<const EndpointTls> ServerOnlyTls(const CallFlags& flags) {
  if (!flags.tls_cert.empty() || flags.tls_ca.empty()) return nullptr;
  auto tls = std::make_shared<EndpointTls>();
  tls->certificates.trust_roots_file = flags.tls_ca;
  tls->certificates.refresh_interval = flags.tls_refresh;
  const std::string& id = flags.static_identity;
  if (!id.empty()) {
    ServerNameMatcher name;
    name.value = id;
    if (absl::StrContains(id, "://")) {
      name.san_type = ServerNameMatcher::SanType::kUri;
    } else {
      name.san_type = ServerNameMatcher::SanType::kDns;
      name.ignore_case = true;  // DNS names, as Linkerd compares them
      tls->sni = id;
    }
    tls->server_names.push_back(std::move(name));
  }
  return tls;
}

int Main(int argc, char** argv) {
  absl::StatusOr<CallFlags> parsed = ParseCallFlags(argc, argv);
  if (!parsed.ok()) {
    std::fprintf(stderr, "mesh-call: %s\n(see %s --help)\n",
                 std::string(parsed.status().message()).c_str(), argv[0]);
    return 2;
  }
  CallFlags& flags = *parsed;
  if (flags.help) {
    std::fputs(Usage(argv[0]).c_str(), stdout);
    return 0;
  }
  if (!flags.data_file.empty()) {
    if (absl::Status s = ReadFile(flags.data_file, &flags.data); !s.ok()) {
      return SetupFailed(absl::StrCat("reading --data @", flags.data_file), s);
    }
  }
  std::string http_body = flags.body;
  if (!flags.body_file.empty()) {
    if (absl::Status s = ReadFile(flags.body_file, &http_body); !s.ok()) {
      return SetupFailed(absl::StrCat("reading --body @", flags.body_file), s);
    }
  }
#if !MESH_CALL_HTTP
  if (!flags.http_method.empty()) {
    return SetupFailed(
        "--http", absl::UnimplementedError("this mesh-call was built without "
                                           "libcurl (mesh_curl)"));
  }
#else
  if (!flags.http_method.empty()) curl_global_init(CURL_GLOBAL_DEFAULT);
#endif

  // Before any thread starts. SIGINT/SIGTERM interrupt the run; the third
  // exits at once.
  BlockTerminationSignals();
  auto run = std::make_shared<Run>(
      flags.rate > 0 && !flags.concurrency_set ? 0 : flags.concurrency);
  WatchTerminationSignals([run] { return run->Interrupt(); }, 3);

  // The channel before the static endpoints, so that a bad --target is
  // reported as such rather than by StaticDiscovery.
  std::shared_ptr<DiscoverySource> discovery;
  std::shared_ptr<StaticDiscovery> static_discovery;
  // --dns, and --linkerd's fallback when servers are named.
  std::shared_ptr<DiscoverySource> dns;
  if (flags.dns || !flags.dns_servers.empty()) {
    DnsOptions options;
    options.servers = flags.dns_servers;
    auto made = NewDnsDiscovery(options);
    if (!made.ok()) {
      return SetupFailed(flags.dns_servers.empty() ? "--dns" : "--dns-server",
                         made.status(), ExitCodeFor(made.status()));
    }
    dns = *std::move(made);
  }
  if (flags.dns) {
    discovery = dns;
  } else if (!flags.linkerd.empty()) {
    LinkerdDiscoveryOptions options;
    options.address = flags.linkerd;
    options.context_token = flags.context_token;
    options.policy_address = flags.linkerd_policy;
    options.source_workload = flags.source_workload;
    options.dns_fallback_source = dns;  // null: the system's servers
    if (!flags.linkerd_identity.empty()) {
      options.identity.cert_chain_file = flags.tls_cert;
      options.identity.private_key_file = flags.tls_key;
      options.identity.trust_roots_file = flags.tls_ca;
      options.identity.refresh_interval = flags.tls_refresh;
      options.server_identity = flags.linkerd_identity;
    }
    auto linkerd = NewLinkerdDiscovery(options);
    if (!linkerd.ok()) {
      return SetupFailed("--linkerd", linkerd.status(),
                         ExitCodeFor(linkerd.status()));
    }
    discovery = *std::move(linkerd);
  } else if (!flags.xds_bootstrap.empty()) {
    XdsOptions options;
    options.bootstrap_path = flags.xds_bootstrap;
    auto xds = NewXdsDiscovery(options);
    if (!xds.ok()) {
      return SetupFailed("--xds-bootstrap", xds.status(),
                         ExitCodeFor(xds.status()));
    }
    discovery = *std::move(xds);
  } else {
    static_discovery = StaticDiscovery::Create();
    discovery = static_discovery;
  }
  MeshOptions mesh_options;
  mesh_options.discovery = discovery;
  mesh_options.tap_address = flags.tap;
  mesh_options.admin_address = flags.admin;
  if (!flags.tls_cert.empty()) {
    mesh_options.identity.cert_chain_file = flags.tls_cert;
    mesh_options.identity.private_key_file = flags.tls_key;
    mesh_options.identity.trust_roots_file = flags.tls_ca;
    mesh_options.identity.refresh_interval = flags.tls_refresh;
  }
  auto mesh = Mesh::Create(mesh_options);
  if (!mesh.ok()) return SetupFailed("creating the mesh", mesh.status());
  if (!flags.tap.empty()) {
    // One line, flushed, that scripts wait for before starting mesh-tap.
    std::fprintf(stderr, "mesh-call: tap (Observe) on %s, port %d\n",
                 flags.tap.c_str(), (*mesh)->tap_port());
    std::fflush(stderr);
  }
  if (!flags.admin.empty()) {
    // One line, flushed, with the URL a browser opens (scripts wait for it).
    std::fprintf(stderr, "mesh-call: admin page on http://%s/\n",
                 (*mesh)->AdminAddress().c_str());
    std::fflush(stderr);
  }
  ChannelOptions channel_options;
  channel_options.balancer.kind = flags.balancer;
  auto channel = (*mesh)->NewChannel(flags.target, channel_options);
  if (!channel.ok()) {
    return SetupFailed("--target", channel.status(),
                       ExitCodeFor(channel.status()));
  }
  if (static_discovery != nullptr) {
    std::vector<Endpoint> endpoints(flags.static_endpoints.begin(),
                                    flags.static_endpoints.end());
    std::shared_ptr<const EndpointTls> tls = ServerOnlyTls(flags);
    for (Endpoint& e : endpoints) {
      if (flags.http2) e.protocol_hint = ProtocolHint::kHttp2;
      if (tls != nullptr) {
        e.tls = tls;
      } else {
        e.tls_identity = flags.static_identity;
      }
    }
    absl::Status s = static_discovery->SetEndpoints(flags.target, endpoints);
    if (!s.ok()) return SetupFailed("--static", s, ExitCodeFor(s));
  }
  // --wait 0: call at once; the calls themselves wait for discovery (up to
  // the channel's fail-fast timeout).
  if (flags.wait > absl::ZeroDuration()) {
    if (absl::Status s = (*channel)->WaitForEndpoints(flags.wait); !s.ok()) {
      return SetupFailed(
          absl::StrCat("waiting ", absl::FormatDuration(flags.wait),
                       " for endpoints"),
          s);
    }
  }

  RunResult result;
  if (!flags.http_method.empty()) {
#if MESH_CALL_HTTP
    result = DriveHttp(**channel, flags, http_body, run);
#endif
  } else {
    result = Drive(**channel, flags, run);
  }
  result.target = flags.target;
  result.method = flags.http_method.empty()
                      ? flags.method
                      : absl::StrCat(flags.http_method, " ", flags.http_path);
  result.mode = DescribeMode(flags);
  for (const EndpointStats& e : (*channel)->EndpointStatsSnapshot()) {
    result.known_endpoints[e.address] = e.pending;
  }
  Summary summary = Summarize(result);
  std::fputs((flags.json ? FormatJson(summary) : FormatTable(summary)).c_str(),
             stdout);
  if (flags.metrics) {
    std::fputs(RouteMetricsOf((*mesh)->Metrics(), flags.target).c_str(),
               stdout);
  }
  std::fflush(stdout);
  // Destroying the channel and the mesh cancels the calls still in flight;
  // their callbacks find the Run closed.
  return 0;
}

}  // namespace
}  // namespace mesh::tools

int main(int argc, char** argv) {
  mesh::tools::KeepTlsLibraryAtExit();
  return mesh::tools::Main(argc, argv);
}
