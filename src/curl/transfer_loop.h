// TransferLoop: one curl multi handle and the thread that drives it. It runs
// the transfers of mesh::curl's attempts, and the tasks other threads post
// to it (an attempt sent from mesh's timer thread after a backoff, a call's
// end, a cancellation), so that every use of an application's easy handle
// happens on the thread that drives the loop, as libcurl requires.
//
// It also keeps count of the HTTP/2 cleartext connections open per endpoint
// address (curl's open/close socket callbacks, set on the transfer that
// opens one), so that a transfer to an endpoint with none asks for HTTP/2
// with prior knowledge, and one to an endpoint with one reuses it (curl
// 7.88 fails to reuse a prior-knowledge connection when the next transfer
// asks for prior knowledge again).
//
// Post and Wake are thread-safe; everything else is for the driving thread.
#ifndef MESH_SRC_CURL_TRANSFER_LOOP_H_
#define MESH_SRC_CURL_TRANSFER_LOOP_H_

#include <curl/curl.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "src/base/mutex.h"

namespace mesh::internal {

class TransferLoop {
 public:
  TransferLoop();
  // Ends the transfers still running (their callbacks are not called) and
  // closes the connections.
  ~TransferLoop();
  TransferLoop(const TransferLoop&) = delete;
  TransferLoop& operator=(const TransferLoop&) = delete;

  // Runs `task` on the driving thread at the loop's next turn (from any
  // thread; tasks run in order). Wakes the loop unless called on its
  // thread.
  void Post(absl::AnyInvocable<void()> task);

  // Starts the transfer of `easy`, configured by the caller; `done` runs on
  // the driving thread with curl's result once it has ended (the handle is
  // out of the multi handle by then); CURLE_BAD_FUNCTION_ARGUMENT, at the
  // next turn, for a handle another multi handle holds. A transfer still
  // running at `deadline` is ended CURLE_OPERATION_TIMEDOUT (as Abort).
  void Start(CURL* easy, absl::Time deadline,
             absl::AnyInvocable<void(CURLcode)> done);
  // Ends a running transfer early: `done` runs with `code`. Its HTTP/2
  // stream is reset; curl 7.88 sends that reset only with the connection's
  // next frames, so a connection no other transfer is using is closed
  // instead, for the server to learn at once. A transfer not running is
  // left alone.
  void Abort(CURL* easy, CURLcode code);

  // Drives transfers and runs posted tasks until `stop()` holds (checked
  // after each turn) or `until` passes.
  void RunUntil(absl::FunctionRef<bool()> stop, absl::Time until);

  // Connections open to `address` (sockets opened by this loop's
  // transfers and not yet closed).
  int OpenConnections(const std::string& address) const;
  // CURLOPT_CONNECT_TO's list for transfers to `address` ("::address":
  // any host and port of the URL connects there); kept by the loop.
  const curl_slist* ConnectTo(const std::string& address);
  // Sets the socket callbacks that keep the count on `easy` (for its next
  // transfer) for a connection to `address`.
  void TrackConnections(CURL* easy, const std::string& address);

  // How a transfer to an HTTP/2 cleartext endpoint asks for HTTP/2. Only
  // the transfer that opens the endpoint's connection may ask for prior
  // knowledge; until that connection is made, other transfers to the
  // endpoint wait, then ride on it (HTTP/2 without prior knowledge, which
  // curl takes as "reuse the multiplexed connection").
  enum class H2c {
    kReuse,  // a connection is open: CURL_HTTP_VERSION_2_0
    kOpen,   // this transfer opens it: CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
    kWait,   // another transfer is opening it: AwaitH2c
  };
  // kOpen makes `easy` the opener: its connection's being made (curl's
  // pre-request callback) or its end releases the waiters.
  H2c H2cFor(CURL* easy, const std::string& address);
  // Runs `ready` at a later turn, once the opener's connection is made or
  // the opener has ended.
  void AwaitH2c(const std::string& address, absl::AnyInvocable<void()> ready);

  bool OnLoopThread() const {
    return std::this_thread::get_id() == owner_.load(std::memory_order_acquire);
  }
  // The thread that drives the loop from now on (the creator's by default).
  void SetOwner(std::thread::id owner) {
    owner_.store(owner, std::memory_order_release);
  }

 private:
  struct Running {
    absl::AnyInvocable<void(CURLcode)> done;
    absl::Time deadline = absl::InfiniteFuture();
  };
  // Ends the transfers whose deadline has passed; returns the next
  // deadline.
  absl::Time ExpireDeadlines();
  static curl_socket_t OpenSocket(void* self, curlsocktype purpose,
                                  curl_sockaddr* address);
  static int CloseSocket(void* self, curl_socket_t fd);
  static int Connected(void* opener, char*, char*, int, int);
  // The h2c opener to `address` is done opening: release its waiters.
  void Opened(const std::string& address);
  void Finish(CURL* easy, CURLcode code);
  bool RunTasks();

  CURLM* const multi_;
  std::atomic<std::thread::id> owner_;
  absl::flat_hash_map<CURL*, Running> running_;
  int timed_ = 0;  // running transfers with a deadline
  // What curl's open-socket callback gets for one address (stable: map
  // nodes), the address each open socket connects to, and the count per
  // address.
  struct Opener {
    TransferLoop* loop;
    std::string address;
  };
  std::map<std::string, Opener> openers_;
  std::map<curl_socket_t, std::string> sockets_;
  std::map<std::string, int> open_;
  // Per h2c endpoint address: the transfer opening its connection, and the
  // transfers waiting for it.
  struct Opening {
    CURL* opener = nullptr;
    std::vector<absl::AnyInvocable<void()>> waiting;
  };
  std::map<std::string, Opening> opening_;
  std::map<std::string, curl_slist*> connect_to_;

  Mutex mu_;
  std::vector<absl::AnyInvocable<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  // tasks_ is not empty: read without the lock on every turn (set under
  // it).
  std::atomic<bool> pending_{false};
  // The tasks of the turn being run (the loop's thread only): swapped with
  // tasks_, so that neither allocates once grown.
  std::vector<absl::AnyInvocable<void()>> turn_;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_CURL_TRANSFER_LOOP_H_
