// mesh::curl's entry points: Perform (a thread's own loop) and Multi.
#include "mesh/curl.h"

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "src/base/mutex.h"
#include "src/curl/http_call.h"
#include "src/curl/transfer_loop.h"

namespace mesh {
namespace internal {

// The requests of one Multi (or of one thread's Performs) and their loop.
struct CurlRequests {
  TransferLoop loop;
  Mutex mu;
  // A call in flight and the application's `done` for it (kept here, so
  // that the call's own callback stays small enough not to allocate).
  struct InFlight {
    std::unique_ptr<HttpCall> call;
    absl::AnyInvocable<void(curl::Result)> done;
  };
  absl::flat_hash_map<uint64_t, InFlight> calls ABSL_GUARDED_BY(mu);
  uint64_t next_id ABSL_GUARDED_BY(mu) = 0;
  std::atomic<size_t> in_flight{0};
  // Raised when the Multi ends: its calls without a cancellation of the
  // application's share it.
  const std::shared_ptr<Cancellation> drain = std::make_shared<Cancellation>();

  void Add(Channel& channel, CURL* easy, curl::Request request,
           absl::AnyInvocable<void(curl::Result)> done) {
    HttpCall* call = nullptr;
    {
      MutexLock lock(&mu);
      const uint64_t id = next_id++;
      auto owned = std::make_unique<HttpCall>(
          loop, channel, easy, std::move(request),
          [this, id](curl::Result result) {
            InFlight ended;
            {
              MutexLock lock(&mu);
              auto it = calls.find(id);
              ended = std::move(it->second);
              calls.erase(it);
            }
            in_flight.fetch_sub(1);
            ended.done(std::move(result));
          },
          drain);
      call = owned.get();
      calls.emplace(id, InFlight{std::move(owned), std::move(done)});
    }
    in_flight.fetch_add(1);
    if (loop.OnLoopThread()) return call->Start();
    loop.Post([call] { call->Start(); });
  }

  size_t Poll(absl::Duration timeout) {
    loop.SetOwner(std::this_thread::get_id());
    loop.RunUntil([this] { return in_flight.load() == 0; },
                  absl::Now() + timeout);
    return in_flight.load();
  }

  // Cancels every request in flight and drives them until each has ended.
  void Drain() {
    loop.SetOwner(std::this_thread::get_id());
    drain->Cancel();
    std::vector<uint64_t> ids;
    {
      MutexLock lock(&mu);
      for (auto& [id, entry] : calls) {
        entry.call->Cancel();
        ids.push_back(id);
      }
    }
    // Transfers in flight end now; a call that ends erases itself, so each
    // is looked up again.
    for (uint64_t id : ids) {
      HttpCall* call = nullptr;
      {
        MutexLock lock(&mu);
        auto it = calls.find(id);
        if (it != calls.end()) call = it->second.call.get();
      }
      if (call != nullptr) call->AbortTransfer();
    }
    while (in_flight.load() > 0) Poll(absl::Seconds(1));
  }
};

}  // namespace internal

namespace curl {

Multi::Multi() : state_(std::make_shared<internal::CurlRequests>()) {}

Multi::~Multi() { state_->Drain(); }

void Multi::Add(Channel& channel, CURL* easy, Request request,
                absl::AnyInvocable<void(Result)> done) {
  state_->Add(channel, easy, std::move(request), std::move(done));
}

size_t Multi::Poll(absl::Duration timeout) { return state_->Poll(timeout); }

size_t Multi::in_flight() const { return state_->in_flight.load(); }

Result Perform(Channel& channel, CURL* easy, const Request& request) {
  // Each thread keeps one loop, and so its connections, across its
  // requests. A Perform from inside one of its callbacks gets a loop of its
  // own (curl drives one multi handle at a time).
  thread_local internal::CurlRequests* reusable = nullptr;
  thread_local std::unique_ptr<internal::CurlRequests> owned;
  std::unique_ptr<internal::CurlRequests> nested;
  internal::CurlRequests* state;
  if (owned == nullptr) {
    owned = std::make_unique<internal::CurlRequests>();
    reusable = owned.get();
  }
  if (reusable != nullptr) {
    state = reusable;
    reusable = nullptr;
  } else {
    nested = std::make_unique<internal::CurlRequests>();
    state = nested.get();
  }
  // The call lives on this frame: Perform waits for its end, so it needs
  // no Cancellation of its own, nor a place among a Multi's calls.
  Result out;
  bool finished = false;
  internal::HttpCall call(
      state->loop, channel, easy, request,
      [&](Result r) {
        out = std::move(r);
        finished = true;
      },
      /*shared_cancel=*/nullptr);
  call.Start();
  while (!finished) {
    state->loop.RunUntil([&] { return finished; },
                         absl::Now() + absl::Hours(1));
  }
  if (nested == nullptr) reusable = state;
  return out;
}

}  // namespace curl
}  // namespace mesh
