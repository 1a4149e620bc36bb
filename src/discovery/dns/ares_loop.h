// AresLoop: one thread that owns a c-ares channel and runs its sockets with
// poll(). Lookups (A and AAAA together) and timed tasks are posted to it
// from any thread; their callbacks run on it, one at a time. No call
// blocks on the network.
//
//   auto loop = AresLoop::Start(options);  // StatusOr
//   (*loop)->Lookup("db.internal", [](absl::StatusOr<DnsAnswer> a) {...});
//   (*loop)->RunAt(absl::Now() + absl::Seconds(5), [] {...});
//
// Thread-safe. Destroying it cancels what is pending (lookups end with
// CANCELLED, timed tasks are dropped) and joins the thread.
#ifndef MESH_SRC_DISCOVERY_DNS_ARES_LOOP_H_
#define MESH_SRC_DISCOVERY_DNS_ARES_LOOP_H_

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "mesh/dns.h"
#include "src/base/mutex.h"

namespace mesh::internal {

// One answer: the addresses (canonical text, "10.0.0.1" or "::1"), in the
// order given, and the smallest TTL among them (zero when none).
struct DnsAnswer {
  std::vector<std::string> addresses;
  absl::Duration ttl = absl::ZeroDuration();
};

class AresLoop {
 public:
  // An answer keeps at most this many addresses (the rest is logged).
  static constexpr size_t kMaxAddresses = 1000;

  // A and AAAA are asked separately and combined. NOT_FOUND: the name does
  // not exist (NXDOMAIN for both). OK with no addresses: it exists without
  // A or AAAA records (no answer records, or none on its name). UNAVAILABLE:
  // either query failed (c-ares's reason; a malformed answer; CNAMEs that
  // loop), so that a partial answer never stands for the whole, or the
  // answers hold CNAMEs that lead to no address of either family (an
  // unfollowed chain is not "no records"). CANCELLED: the loop is going
  // away.
  using LookupDone = absl::AnyInvocable<void(absl::StatusOr<DnsAnswer>)>;

  static absl::StatusOr<std::unique_ptr<AresLoop>> Start(
      const DnsOptions& options);
  ~AresLoop();
  AresLoop(const AresLoop&) = delete;
  AresLoop& operator=(const AresLoop&) = delete;

  void Lookup(std::string host, LookupDone done);
  void RunAt(absl::Time when, absl::AnyInvocable<void()> task);

 private:
  struct Channel;  // the c-ares channel, touched by the loop thread only
  struct Timed {
    absl::Time when;
    absl::AnyInvocable<void()> task;
  };
  struct PendingLookup {
    std::string host;
    LookupDone done;
  };

  AresLoop() = default;
  void Run();
  void Wake();

  std::unique_ptr<Channel> channel_;
  int wake_fd_ = -1;  // an eventfd
  Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<PendingLookup> lookups_ ABSL_GUARDED_BY(mu_);
  std::vector<Timed> timed_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_DISCOVERY_DNS_ARES_LOOP_H_
