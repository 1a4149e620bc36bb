#include "src/discovery/dns/ares_loop.h"

#include <ares.h>
#include <grpc/support/log.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "src/discovery/dns/dns_answer.h"

namespace mesh::internal {
namespace {

// c-ares's library state, once per process (ares_library_init is not
// thread-safe; a function-local static is).
absl::Status LibraryInit() {
  static const int status = ares_library_init(ARES_LIB_INIT_ALL);
  if (status != ARES_SUCCESS) {
    return absl::UnavailableError(
        absl::StrCat("c-ares: library init: ", ares_strerror(status)));
  }
  return absl::OkStatus();
}

// One name's two queries, A then AAAA, combined when both have ended. Each
// is asked with ares_search (the search list as ares_getaddrinfo applies
// it) and its raw answer read here: ares_getaddrinfo reports CNAMEs that
// lead to no address exactly as a name without records (ARES_ENODATA, no
// result), and a loop would then drop the last good answer.
struct LookupCall {
  std::string host;
  AresLoop::LookupDone done;
  int pending = 2;
  int status[2] = {ARES_SUCCESS, ARES_SUCCESS};  // A, AAAA
  // Set when status is ARES_SUCCESS: the answer read, or why it could
  // not be.
  absl::StatusOr<AddressRecords> records[2] = {AddressRecords(),
                                               AddressRecords()};
};

struct FamilyQuery {
  std::shared_ptr<LookupCall> call;
  int index;  // 0: A, 1: AAAA
};

const char* FamilyName(int index) { return index == 0 ? "A" : "AAAA"; }

absl::StatusOr<DnsAnswer> Combine(LookupCall& call) {
  auto ok = [](int s) {
    return s == ARES_SUCCESS || s == ARES_ENODATA || s == ARES_ENOTFOUND;
  };
  for (int s : call.status) {
    if (s == ARES_ECANCELLED || s == ARES_EDESTRUCTION) {
      return absl::CancelledError("DNS: the resolver is shutting down");
    }
  }
  for (int i = 0; i < 2; ++i) {
    // The other family's answer alone would drop endpoints: keep the last.
    if (!ok(call.status[i])) {
      return absl::UnavailableError(
          absl::StrCat("DNS: ", FamilyName(i), " query for '", call.host,
                       "' failed: ", ares_strerror(call.status[i])));
    }
    if (call.status[i] == ARES_SUCCESS && !call.records[i].ok()) {
      return absl::UnavailableError(
          absl::StrCat("DNS: ", FamilyName(i), " query for '", call.host,
                       "' failed: ", call.records[i].status().message()));
    }
  }
  if (call.status[0] == ARES_ENOTFOUND && call.status[1] == ARES_ENOTFOUND) {
    return absl::NotFoundError(
        absl::StrCat("DNS: no such name '", call.host, "' (NXDOMAIN)"));
  }
  DnsAnswer answer;
  absl::flat_hash_set<std::string> seen;
  bool any_ttl = false;
  bool truncated = false;
  const AddressRecords* unfollowed = nullptr;
  for (int i = 0; i < 2; ++i) {
    if (call.status[i] != ARES_SUCCESS) continue;
    const AddressRecords& r = *call.records[i];
    if (r.addresses.empty()) {
      if (!r.cnames.empty()) unfollowed = &r;
      continue;
    }
    answer.ttl = any_ttl ? std::min(answer.ttl, r.ttl) : r.ttl;
    any_ttl = true;
    for (const std::string& a : r.addresses) {
      if (seen.contains(a)) continue;
      if (answer.addresses.size() >= AresLoop::kMaxAddresses) {
        truncated = true;
        break;
      }
      seen.insert(a);
      answer.addresses.push_back(a);
    }
  }
  // CNAMEs that lead to no address of either family: the server did not
  // follow them (or their end has no address). Not "no records", which
  // would drop the endpoints: a failed query, the last answer kept. One
  // family's chain without addresses beside the other's addresses is the
  // common name with addresses of one family only.
  if (answer.addresses.empty() && unfollowed != nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "DNS: '", call.host,
        "': the CNAME chain could not be followed to an address (",
        DescribeChain(unfollowed->name, unfollowed->cnames),
        ": no A or AAAA record for its last name in the answers)"));
  }
  if (truncated) {
    gpr_log(GPR_ERROR, "mesh: DNS: '%s' has more than %zu addresses; using %zu",
            call.host.c_str(), AresLoop::kMaxAddresses,
            AresLoop::kMaxAddresses);
  }
  return answer;
}

void OnAnswer(void* arg, int status, int /*timeouts*/, unsigned char* abuf,
              int alen) {
  std::unique_ptr<FamilyQuery> query(static_cast<FamilyQuery*>(arg));
  LookupCall& call = *query->call;
  call.status[query->index] = status;
  if (status == ARES_SUCCESS) {
    call.records[query->index] =
        ReadAddressAnswer(abuf, static_cast<size_t>(std::max(0, alen)),
                          query->index == 0 ? kDnsA : kDnsAaaa);
  }
  if (--call.pending > 0) return;
  call.done(Combine(call));
}

}  // namespace

struct AresLoop::Channel {
  ares_channel channel = nullptr;
  ~Channel() {
    if (channel != nullptr) ares_destroy(channel);
  }
};

absl::StatusOr<std::unique_ptr<AresLoop>> AresLoop::Start(
    const DnsOptions& options) {
  if (absl::Status s = LibraryInit(); !s.ok()) return s;
  std::unique_ptr<AresLoop> loop(new AresLoop());
  loop->channel_ = std::make_unique<Channel>();
  struct ares_options opts;
  std::memset(&opts, 0, sizeof(opts));
  int mask = ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_LOOKUPS;
  opts.timeout = static_cast<int>(
      std::max<int64_t>(1, absl::ToInt64Milliseconds(options.query_timeout)));
  opts.tries = std::max(1, options.tries);
  char lookups[] = "b";  // DNS only, not /etc/hosts
  opts.lookups = lookups;
  if (!options.servers.empty()) {
    // Servers of the application's: no search list of the system's.
    mask |= ARES_OPT_DOMAINS;
    opts.domains = nullptr;
    opts.ndomains = 0;
  }
  int status = ares_init_options(&loop->channel_->channel, &opts, mask);
  if (status != ARES_SUCCESS) {
    return absl::UnavailableError(
        absl::StrCat("c-ares: init: ", ares_strerror(status)));
  }
  if (!options.servers.empty()) {
    const std::string csv = absl::StrJoin(options.servers, ",");
    status = ares_set_servers_ports_csv(loop->channel_->channel, csv.c_str());
    if (status != ARES_SUCCESS) {
      return absl::InvalidArgumentError(absl::StrCat(
          "DnsOptions.servers '", csv, "': ", ares_strerror(status)));
    }
  }
  loop->wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (loop->wake_fd_ < 0) {
    return absl::UnavailableError(
        absl::StrCat("DNS: eventfd: ", std::strerror(errno)));
  }
  loop->thread_ = std::thread([raw = loop.get()] { raw->Run(); });
  return loop;
}

AresLoop::~AresLoop() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  Wake();
  if (thread_.joinable()) thread_.join();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void AresLoop::Wake() {
  const uint64_t one = 1;
  // A full counter already means "wake up".
  (void)!write(wake_fd_, &one, sizeof(one));
}

void AresLoop::Lookup(std::string host, LookupDone done) {
  {
    MutexLock lock(&mu_);
    if (!stop_) {
      lookups_.push_back({std::move(host), std::move(done)});
      done = nullptr;
    }
  }
  if (done) {
    done(absl::CancelledError("DNS: the resolver is shutting down"));
    return;
  }
  Wake();
}

void AresLoop::RunAt(absl::Time when, absl::AnyInvocable<void()> task) {
  {
    MutexLock lock(&mu_);
    if (stop_) return;
    timed_.push_back({when, std::move(task)});
  }
  Wake();
}

void AresLoop::Run() {
  ares_channel channel = channel_->channel;
  for (;;) {
    std::vector<PendingLookup> lookups;
    std::vector<absl::AnyInvocable<void()>> due;
    absl::Time next = absl::InfiniteFuture();
    bool stop;
    {
      MutexLock lock(&mu_);
      stop = stop_;
      lookups.swap(lookups_);
      const absl::Time now = absl::Now();
      auto it = std::partition(timed_.begin(), timed_.end(),
                               [&](const Timed& t) { return t.when > now; });
      for (auto d = it; d != timed_.end(); ++d)
        due.push_back(std::move(d->task));
      timed_.erase(it, timed_.end());
      for (const Timed& t : timed_) next = std::min(next, t.when);
    }
    if (stop) {
      for (PendingLookup& l : lookups) {
        l.done(absl::CancelledError("DNS: the resolver is shutting down"));
      }
      ares_cancel(channel);  // pending queries end CANCELLED, here
      return;
    }
    for (auto& task : due) task();
    for (PendingLookup& l : lookups) {
      auto call = std::make_shared<LookupCall>();
      call->host = std::move(l.host);
      call->done = std::move(l.done);
      for (int index = 0; index < 2; ++index) {
        ares_search(channel, call->host.c_str(), /*dnsclass=*/1,
                    index == 0 ? kDnsA : kDnsAaaa, &OnAnswer,
                    new FamilyQuery{call, index});
      }
    }
    if (!due.empty() || !lookups.empty()) continue;  // look at the queue again

    // Wait for a socket, the wake-up, a timed task or c-ares's time-out.
    ares_socket_t socks[ARES_GETSOCK_MAXNUM];
    const int bits = ares_getsock(channel, socks, ARES_GETSOCK_MAXNUM);
    std::vector<struct pollfd> fds;
    fds.push_back({wake_fd_, POLLIN, 0});
    for (int i = 0; i < ARES_GETSOCK_MAXNUM; ++i) {
      short events = 0;
      if (ARES_GETSOCK_READABLE(bits, i)) events |= POLLIN;
      if (ARES_GETSOCK_WRITABLE(bits, i)) events |= POLLOUT;
      if (events != 0) fds.push_back({socks[i], events, 0});
    }
    absl::Duration wait = next - absl::Now();
    struct timeval tv;
    struct timeval* ares_wait = ares_timeout(channel, nullptr, &tv);
    if (ares_wait != nullptr) {
      wait = std::min(wait, absl::DurationFromTimeval(*ares_wait));
    }
    const int timeout_ms =
        wait == absl::InfiniteDuration()
            ? -1
            : static_cast<int>(std::clamp<int64_t>(
                  absl::ToInt64Milliseconds(wait) + 1, 0, 60'000));
    const int ready = poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) {
      // Not expected (the fds are ours): do not spin on it.
      gpr_log(GPR_ERROR, "mesh: DNS: poll: %s", std::strerror(errno));
      absl::SleepFor(absl::Milliseconds(100));
      continue;
    }
    if (fds[0].revents & POLLIN) {
      uint64_t count;
      (void)!read(wake_fd_, &count, sizeof(count));
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      const ares_socket_t r = (fds[i].revents & (POLLIN | POLLERR | POLLHUP))
                                  ? fds[i].fd
                                  : ARES_SOCKET_BAD;
      const ares_socket_t w =
          (fds[i].revents & POLLOUT) ? fds[i].fd : ARES_SOCKET_BAD;
      if (r != ARES_SOCKET_BAD || w != ARES_SOCKET_BAD) {
        ares_process_fd(channel, r, w);
      }
    }
    ares_process_fd(channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);  // time-outs
  }
}

}  // namespace mesh::internal
