// NewDnsDiscovery: each subscription is a watch of one name on the
// source's AresLoop: a lookup, its answer delivered as a Reset (or
// NoEndpoints), the next lookup due after the TTL (clamped), and on a
// failed query the last answer kept and the lookup tried again with
// backoff. A watch calls its observer after releasing its lock, one call
// at a time and in order (a WorkSerializer), so the observer may call back
// into the source, even cancel its own subscription.
#include <grpc/support/log.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mesh/dns.h"
#include "src/base/mutex.h"
#include "src/base/utf8.h"
#include "src/base/work_serializer.h"
#include "src/discovery/common/builtin_source.h"
#include "src/discovery/common/queued_observers.h"
#include "src/discovery/dns/ares_loop.h"
#include "src/discovery/dns/dns_options.h"
#include "src/model/address.h"

namespace mesh {
namespace {

using internal::AresLoop;
using internal::DnsAnswer;
using internal::Mutex;
using internal::MutexLock;

// How soon a name that did not exist is asked for again (clamped to the
// refresh bounds).
constexpr absl::Duration kNxdomainRetry = absl::Seconds(30);

// "host:port" → host (brackets of an IPv6 literal removed) and port.
absl::Status SplitTarget(const std::string& target, std::string* host,
                         int* port) {
  if (absl::Status s = internal::ValidateDestination(target); !s.ok()) {
    return s;
  }
  const size_t colon = target.rfind(':');
  *host = target.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  if (!absl::SimpleAtoi(target.substr(colon + 1), port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("target '", target, "': bad port"));
  }
  return absl::OkStatus();
}

// One name followed for one observer.
class Watch final : public std::enable_shared_from_this<Watch> {
 public:
  Watch(std::string host, int port, EndpointObserver* observer,
        const DnsOptions& options, AresLoop* loop)
      : host_(std::move(host)),
        port_(port),
        observer_(observer, &serializer_, gate_),
        options_(options),
        loop_(loop) {}

  void Start() { Query(/*generation=*/0, /*early=*/false); }  // from 0

  // A connection to one of the answer's addresses failed. Never blocks:
  // the decision is the loop thread's (EarlyQuery).
  void RefreshSoon() {
    std::weak_ptr<Watch> weak = weak_from_this();
    loop_->RunAt(absl::Now(), [weak] {
      if (std::shared_ptr<Watch> self = weak.lock()) self->EarlyQuery();
    });
  }

  // No observer call after this returns: one running on another thread
  // is waited for; from inside one, the rest are dropped.
  void Cancel() {
    {
      MutexLock lock(&mu_);
      cancelled_ = true;
    }
    gate_->Close(serializer_);
  }

  DiscoverySubscription::State GetState() const {
    MutexLock lock(&mu_);
    DiscoverySubscription::State s;
    s.connected = answered_;
    s.messages = answers_;
    s.streams_started = queries_;
    s.last_error = last_error_;
    DiscoverySubscription::Resource r;
    r.type = "DNS A/AAAA";
    r.name = host_;
    r.state = state_;
    if (early_queries_ > 0) {
      absl::StrAppend(&r.state, ", asked early ", early_queries_,
                      " time(s) after connection failures");
    }
    r.version = version_;
    r.updated = updated_;
    r.error = last_error_;
    s.resources.push_back(std::move(r));
    return s;
  }

 private:
  // Asks again now, or early_floor_ after the last query, unless the name
  // has no answer yet, a query is out, a failed query is being retried
  // with backoff, or the next query is due sooner anyway.
  void EarlyQuery() {
    MutexLock lock(&mu_);
    if (cancelled_ || in_flight_ || !answered_ ||
        backoff_ > absl::ZeroDuration()) {
      return;
    }
    const absl::Time at = std::max(absl::Now(), last_query_ + early_floor_);
    if (next_query_ <= at) return;
    ++early_queries_;
    ScheduleQueryLocked(at, /*early=*/true);
  }

  // Runs the query scheduled as `generation` (an early one, or not),
  // unless a later schedule replaced it.
  void Query(uint64_t generation, bool early) {
    {
      MutexLock lock(&mu_);
      if (cancelled_ || generation != generation_) return;
      ++queries_;
      in_flight_ = true;
      query_is_early_ = early;
      last_query_ = absl::Now();
      next_query_ = absl::InfiniteFuture();
    }
    std::weak_ptr<Watch> weak = weak_from_this();
    loop_->Lookup(host_, [weak](absl::StatusOr<DnsAnswer> answer) {
      if (std::shared_ptr<Watch> self = weak.lock()) {
        self->OnAnswer(std::move(answer));
      }
    });
  }

  // The next query at `when`; any query scheduled before is dropped.
  void ScheduleQueryLocked(absl::Time when, bool early = false)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const uint64_t generation = ++generation_;
    next_query_ = when;
    std::weak_ptr<Watch> weak = weak_from_this();
    loop_->RunAt(when, [weak, generation, early] {
      if (std::shared_ptr<Watch> self = weak.lock()) {
        self->Query(generation, early);
      }
    });
  }
  void ScheduleQueryLocked(absl::Duration after)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ScheduleQueryLocked(absl::Now() + after);
  }

  absl::Duration Clamp(absl::Duration d) const {
    return std::clamp(d, options_.min_refresh, options_.max_refresh);
  }

  // On the loop thread. What it tells the observer is queued under mu_
  // and delivered once mu_ is released.
  void OnAnswer(absl::StatusOr<DnsAnswer> answer) {
    if (answer.status().code() == absl::StatusCode::kCancelled) return;
    {
      MutexLock lock(&mu_);
      if (!cancelled_) OnAnswerLocked(std::move(answer));
    }
    serializer_.DrainQueue();
  }

  void OnAnswerLocked(absl::StatusOr<DnsAnswer> answer)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    in_flight_ = false;
    if (!answer.ok() && answer.status().code() != absl::StatusCode::kNotFound) {
      // The last answer keeps serving; try again with backoff.
      backoff_ = backoff_ == absl::ZeroDuration()
                     ? options_.min_refresh
                     : std::min(backoff_ * 2, options_.max_refresh);
      const bool log = last_error_ != answer.status().message();
      last_error_ = std::string(answer.status().message());
      if (log) {
        gpr_log(GPR_ERROR, "mesh: %s; keeping the last answer, retrying in %s",
                last_error_.c_str(), absl::FormatDuration(backoff_).c_str());
      }
      state_ = absl::StrCat(state_ == "REQUESTED" ? "REQUESTED" : "STALE",
                            ", retrying in ", absl::FormatDuration(backoff_));
      observer_.OnDiscoveryError(answer.status());
      ScheduleQueryLocked(backoff_);
      return;
    }
    updated_ = absl::Now();
    backoff_ = absl::ZeroDuration();
    last_error_.clear();
    ++answers_;
    answered_ = true;
    if (!answer.ok()) {  // NXDOMAIN
      state_ = "NXDOMAIN";
      version_.clear();
      // A name that comes back is delivered again, even with the same
      // records.
      delivered_ = false;
      last_.clear();
      observer_.OnEndpointUpdate(EndpointUpdate::NoEndpoints(
          false, std::string(answer.status().message())));
      // Asked again, in case the name is created.
      ScheduleQueryLocked(Clamp(kNxdomainRetry));
      return;
    }
    std::vector<std::string> addresses;
    for (const std::string& ip : answer->addresses) {
      addresses.push_back(internal::JoinHostPort(ip, port_));
    }
    std::sort(addresses.begin(), addresses.end());
    // A name without records is asked again like one that does not exist
    // (its negative answer carries no TTL here).
    const absl::Duration next =
        addresses.empty() ? Clamp(kNxdomainRetry) : Clamp(answer->ttl);
    state_ = addresses.empty() ? "NO_RECORDS" : "RESOLVED";
    version_ = absl::StrCat(absl::StrJoin(addresses, ","), " ttl ",
                            absl::FormatDuration(answer->ttl), " next ",
                            absl::FormatDuration(next));
    // Early queries that keep bringing the same answer (an address that is
    // down, not moved) come less often: the floor doubles up to
    // max_refresh, and a changed answer resets it.
    if (query_is_early_ && delivered_ && addresses == last_) {
      early_floor_ = std::min(early_floor_ * 2, options_.max_refresh);
    } else if (addresses != last_) {
      early_floor_ = options_.min_refresh;
    }
    if (!delivered_ || addresses != last_) {
      delivered_ = true;
      last_ = addresses;
      if (addresses.empty()) {
        observer_.OnEndpointUpdate(EndpointUpdate::NoEndpoints(
            true, absl::StrCat("DNS: '", host_, "' has no A or AAAA records")));
      } else {
        std::vector<Endpoint> endpoints;
        endpoints.reserve(addresses.size());
        for (const std::string& a : addresses) endpoints.emplace_back(a);
        observer_.OnEndpointUpdate(EndpointUpdate::Reset(std::move(endpoints)));
      }
    }
    ScheduleQueryLocked(next);
  }

  const std::string host_;
  const int port_;
  // The observer's calls, queued under mu_ and run after it, in order,
  // through a gate that Cancel closes. Declared before observer_.
  internal::WorkSerializer serializer_;
  const std::shared_ptr<internal::DeliveryGate> gate_ =
      std::make_shared<internal::DeliveryGate>();
  internal::QueuedEndpoints observer_;
  const DnsOptions options_;
  AresLoop* const loop_;
  mutable Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  bool in_flight_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time last_query_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time next_query_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  int64_t early_queries_ ABSL_GUARDED_BY(mu_) = 0;
  bool query_is_early_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration early_floor_ ABSL_GUARDED_BY(mu_) = options_.min_refresh;
  bool delivered_ ABSL_GUARDED_BY(mu_) = false;
  bool answered_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::string> last_ ABSL_GUARDED_BY(mu_);
  absl::Duration backoff_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  int64_t queries_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t answers_ ABSL_GUARDED_BY(mu_) = 0;
  std::string last_error_ ABSL_GUARDED_BY(mu_);
  std::string state_ ABSL_GUARDED_BY(mu_) = "REQUESTED";
  std::string version_ ABSL_GUARDED_BY(mu_);
  absl::Time updated_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

class DnsSubscription final : public DiscoverySubscription {
 public:
  explicit DnsSubscription(std::shared_ptr<Watch> watch)
      : watch_(std::move(watch)) {}
  ~DnsSubscription() override { watch_->Cancel(); }
  State GetState() const override { return watch_->GetState(); }
  void RefreshSoon() override { watch_->RefreshSoon(); }

 private:
  const std::shared_ptr<Watch> watch_;
};

// A target that is an address already: that endpoint, no lookup.
class FixedSubscription final : public DiscoverySubscription {};

class DnsDiscovery final : public internal::BuiltinSource {
 public:
  DnsDiscovery(DnsOptions options, std::unique_ptr<AresLoop> loop)
      : options_(std::move(options)), loop_(std::move(loop)) {}

  std::unique_ptr<DiscoverySubscription> Subscribe(
      const std::string& target, EndpointObserver* observer) override {
    // "//server/host:port" (dns://server/host:port): asked of that server.
    absl::string_view server, name;
    const bool own_server = internal::SplitSourceName(target, &server, &name);
    std::string host;
    int port = 0;
    if (absl::Status s = SplitTarget(std::string(name), &host, &port);
        !s.ok()) {
      observer->OnDiscoveryError(
          absl::FailedPreconditionError(absl::StrCat("DNS: ", s.message())));
      return std::make_unique<FixedSubscription>();
    }
    const std::string literal = internal::JoinHostPort(host, port);
    if (internal::SocketAddress::Parse(literal).ok()) {
      observer->OnEndpointUpdate(EndpointUpdate::Reset({Endpoint(literal)}));
      return std::make_unique<FixedSubscription>();
    }
    // c-ares answers "localhost" from the hosts file only, which this source
    // does not read: it is the loopback addresses.
    if (absl::EqualsIgnoreCase(host, "localhost")) {
      observer->OnEndpointUpdate(EndpointUpdate::Reset(
          {Endpoint(internal::JoinHostPort("127.0.0.1", port)),
           Endpoint(internal::JoinHostPort("::1", port))}));
      return std::make_unique<FixedSubscription>();
    }
    AresLoop* loop = loop_.get();
    if (own_server) {
      absl::StatusOr<AresLoop*> own = LoopFor(server);
      if (!own.ok()) {
        observer->OnDiscoveryError(absl::FailedPreconditionError(
            absl::StrCat("DNS: ", own.status().message())));
        return std::make_unique<FixedSubscription>();
      }
      loop = *own;
    }
    auto watch = std::make_shared<Watch>(std::move(host), port, observer,
                                         options_, loop);
    watch->Start();
    return std::make_unique<DnsSubscription>(std::move(watch));
  }

  std::string Scheme() const override { return "dns"; }
  std::string KindName() const override { return "dns"; }
  bool TakesAuthority() const override { return true; }

 private:
  // The loop that asks `server` ("a.b.c.d", "[v6]", with or without a
  // port; 53 if none), started on first use and kept for the source's life.
  absl::StatusOr<AresLoop*> LoopFor(absl::string_view server) {
    absl::StatusOr<internal::SocketAddress> parsed =
        internal::SocketAddress::Parse(server);
    if (!parsed.ok()) {
      parsed = internal::SocketAddress::Parse(absl::StrCat(server, ":53"));
    }
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the target's server '", internal::PrintableText(server),
          "' is not an IP address with an optional port (\"10.0.0.2:53\", "
          "\"[::1]:53\")"));
    }
    // One spelling per server ("[0::1]" is "[::1]").
    const std::string address = parsed->ToString();
    internal::MutexLock lock(&mu_);
    auto found = by_server_.find(address);
    if (found != by_server_.end()) return found->second.get();
    if (by_server_.size() >= kMaxServers) {
      return absl::ResourceExhaustedError(
          absl::StrCat("targets name more than ", kMaxServers,
                       " DNS servers; not asking '", address, "'"));
    }
    DnsOptions options = options_;
    options.servers = {address};
    absl::StatusOr<std::unique_ptr<AresLoop>> loop = AresLoop::Start(options);
    if (!loop.ok()) {
      return absl::Status(loop.status().code(),
                          absl::StrCat("the target's server '", address,
                                       "': ", loop.status().message()));
    }
    AresLoop* raw = loop->get();
    by_server_.emplace(address, *std::move(loop));
    return raw;
  }

  // Servers named in targets each take a thread: bounded.
  static constexpr size_t kMaxServers = 16;

  const DnsOptions options_;
  const std::unique_ptr<AresLoop> loop_;
  internal::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<AresLoop>> by_server_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace

namespace internal {

absl::Status ValidateDnsOptions(const DnsOptions& options) {
  if (options.min_refresh <= absl::ZeroDuration() ||
      options.max_refresh < options.min_refresh) {
    return absl::InvalidArgumentError(
        "DnsOptions: min_refresh must be above zero and at most max_refresh");
  }
  if (options.query_timeout <= absl::ZeroDuration() || options.tries < 1) {
    return absl::InvalidArgumentError(
        "DnsOptions: query_timeout must be above zero and tries at least 1");
  }
  for (const std::string& server : options.servers) {
    if (!SocketAddress::Parse(server).ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "DnsOptions.servers: '", internal::QuotedText(server),
          "' is not an address with a port (\"127.0.0.1:53\", \"[::1]:53\")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace internal

absl::StatusOr<std::shared_ptr<DiscoverySource>> NewDnsDiscovery(
    const DnsOptions& options) {
  if (absl::Status s = internal::ValidateDnsOptions(options); !s.ok()) {
    return s;
  }
  absl::StatusOr<std::unique_ptr<AresLoop>> loop = AresLoop::Start(options);
  if (!loop.ok()) return loop.status();
  return std::make_shared<DnsDiscovery>(options, *std::move(loop));
}

}  // namespace mesh
