// Transports for the tests and the benchmarks that stand in for gRPC's:
//
//   InlineTransport  answers every request at once, on the caller's
//                    thread, with what a function makes of the request
//                    (EchoAnswer: 200 and the request's body). Nothing is
//                    recorded; the function is inlined, so a benchmark pays
//                    no more than for a hand-written transport.
//   FakeTransport    records every request (and RetainOnly, Shutdown) on a
//                    FakeWire the test holds, and answers from it: at once,
//                    or when the test answers the held calls; or passes the
//                    requests on to a real transport.
//
//   options.transport_factory = [] { return NewInlineTransport(EchoAnswer());
//   };
//
//   auto wire = std::make_shared<FakeWire>();
//   wire->answer.status = absl::UnavailableError("down");
//   Destination d("books:8080", std::make_unique<FakeTransport>(wire), ...);
//
// Header-only, so that the benchmarks can use them without the tests'
// libraries. Thread-safe as a Transport must be; a FakeWire is guarded by
// its `mu`.
#ifndef MESH_TESTS_SUPPORT_FAKE_TRANSPORTS_H_
#define MESH_TESTS_SUPPORT_FAKE_TRANSPORTS_H_

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "mesh/endpoint.h"
#include "mesh/transport.h"

namespace mesh::testing {

// Answers every request at once, on the caller's thread, with
// `answer(request)`, a TransportResponse; `answer` gets the request as a
// TransportRequest& and may move from it.
template <typename Answer>
class InlineTransport final : public Transport {
 public:
  explicit InlineTransport(Answer answer) : answer_(std::move(answer)) {}

  void Send(const Endpoint&, TransportRequest request, Callback done) override {
    done(answer_(request));
  }

 private:
  Answer answer_;
};

template <typename Answer>
std::unique_ptr<Transport> NewInlineTransport(Answer answer) {
  return std::make_unique<InlineTransport<Answer>>(std::move(answer));
}

// HTTP 200 with the request's body, for InlineTransport.
struct EchoAnswer {
  TransportResponse operator()(TransportRequest& request) const {
    TransportResponse response;
    response.http_status = 200;
    response.body = std::move(request.body);
    return response;
  }
};

// What a FakeTransport shares with its test. Lock `mu` to read or change it
// while requests may be sent.
struct FakeWire {
  std::mutex mu;
  // Every request, in the order sent, and the endpoint it was sent to.
  std::vector<TransportRequest> requests;
  std::vector<const Endpoint*> endpoints;
  // With `hold`, the callbacks of the requests not answered yet; otherwise
  // each request is answered at once with `answer`.
  bool hold = false;
  std::deque<Transport::Callback> held;
  TransportResponse answer;
  // The addresses of the last RetainOnly, and the calls of each.
  std::vector<std::string> retained;
  int retain_only_calls = 0;
  int shutdown_calls = 0;
  // The threads that called SendAndWait, in order (a synchronous call's
  // attempts on their caller's thread), and how many requests came through
  // Send (asynchronous).
  std::vector<std::thread::id> waiting_threads;
  int async_sends = 0;

  // Answers every held call with `response` (on this thread); returns how
  // many.
  size_t AnswerHeld(const TransportResponse& response) {
    std::deque<Transport::Callback> calls;
    {
      std::lock_guard<std::mutex> lock(mu);
      calls.swap(held);
    }
    for (Transport::Callback& done : calls) done(response);
    return calls.size();
  }

  // The bodies of `requests`, in order.
  std::vector<std::string> Bodies() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> bodies;
    for (const TransportRequest& r : requests) bodies.push_back(r.body);
    return bodies;
  }
};

// Records on `wire` and answers from it; with `inner`, records a copy of
// each request and passes the request on to `inner`, and RetainOnly and
// Shutdown too (`hold` and `answer` are not used then).
class FakeTransport final : public Transport {
 public:
  explicit FakeTransport(std::shared_ptr<FakeWire> wire,
                         std::unique_ptr<Transport> inner = nullptr)
      : wire_(std::move(wire)), inner_(std::move(inner)) {}

  void Send(const Endpoint& endpoint, TransportRequest request,
            Callback done) override {
    {
      std::lock_guard<std::mutex> lock(wire_->mu);
      if (!in_send_and_wait) ++wire_->async_sends;
    }
    Record(endpoint, std::move(request), std::move(done));
  }

  // Recorded as a Send (in `waiting_threads` too); with `inner`, passed on
  // to the inner transport's SendAndWait.
  TransportResponse SendAndWait(const Endpoint& endpoint,
                                TransportRequest request) override {
    {
      std::lock_guard<std::mutex> lock(wire_->mu);
      wire_->waiting_threads.push_back(std::this_thread::get_id());
      if (inner_ != nullptr) {
        wire_->endpoints.push_back(&endpoint);
        wire_->requests.push_back(request);
      }
    }
    if (inner_ != nullptr) {
      return inner_->SendAndWait(endpoint, std::move(request));
    }
    in_send_and_wait = true;
    TransportResponse response =
        Transport::SendAndWait(endpoint, std::move(request));
    in_send_and_wait = false;
    return response;
  }

 private:
  // This thread is in SendAndWait (whose default calls Send).
  static inline thread_local bool in_send_and_wait = false;

  void Record(const Endpoint& endpoint, TransportRequest request,
              Callback done) {
    TransportResponse answer;
    {
      std::lock_guard<std::mutex> lock(wire_->mu);
      wire_->endpoints.push_back(&endpoint);
      if (inner_ != nullptr) {
        wire_->requests.push_back(request);
      } else {
        wire_->requests.push_back(std::move(request));
        if (wire_->hold) {
          wire_->held.push_back(std::move(done));
          return;
        }
        answer = wire_->answer;
      }
    }
    if (inner_ != nullptr) {
      inner_->Send(endpoint, std::move(request), std::move(done));
      return;
    }
    done(std::move(answer));
  }

 public:
  void RetainOnly(const std::vector<std::string>& addresses) override {
    {
      std::lock_guard<std::mutex> lock(wire_->mu);
      wire_->retained = addresses;
      ++wire_->retain_only_calls;
    }
    if (inner_ != nullptr) inner_->RetainOnly(addresses);
  }

  void Shutdown() override {
    {
      std::lock_guard<std::mutex> lock(wire_->mu);
      ++wire_->shutdown_calls;
    }
    if (inner_ != nullptr) inner_->Shutdown();
  }

 private:
  const std::shared_ptr<FakeWire> wire_;
  const std::unique_ptr<Transport> inner_;
};

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_FAKE_TRANSPORTS_H_
