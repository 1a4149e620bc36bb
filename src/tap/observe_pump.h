// ObservePump moves one subscription's events onto one Observe stream, a
// write at a time; ObserveWriter is the one thread of an Observe server
// that does that work for all its streams.
//
// Why a thread of its own: a subscription tells its reader that events
// wait (on_ready) from the thread of the request that buffered them, and a
// request must pay no more for a subscriber than a try-send into its buffer
// (Linkerd's rule). So the hook only marks the pump scheduled and hands it
// to the writer; turning events into wire messages, serializing and
// starting writes happen there, as do the next writes after each write
// completes. Each stream is scheduled at most once at a time, so a request
// hands over at most one pointer per subscription and never waits for a
// write or a serialization (100 never-reading subscribers once cost calls
// 4× their p50, their events serialized on the calls' own threads behind
// the pumps' locks). A client that stops reading stops the writes (HTTP/2
// flow control); its subscription's buffer fills and drops.
//
//   ObserveWriter writer;
//   auto pump = std::make_shared<ObservePump>(&writer, stream, context);
//   pump->Start(std::move(subscription));   // hook: pump->Ready()
//   // reactor: OnWriteDone(ok) → pump->WriteDone(ok); OnDone → Detach()
//
// Thread-safe.
#ifndef MESH_SRC_TAP_OBSERVE_PUMP_H_
#define MESH_SRC_TAP_OBSERVE_PUMP_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "mesh/tap.h"
#include "src/base/mutex.h"

namespace mesh::internal {

class ObservePump;

// The thread that advances the pumps scheduled to it, in the order they
// were scheduled. Destroying it stops and joins the thread, leaving
// unadvanced what is still scheduled.
class ObserveWriter {
 public:
  ObserveWriter();
  ~ObserveWriter();
  ObserveWriter(const ObserveWriter&) = delete;
  ObserveWriter& operator=(const ObserveWriter&) = delete;

  // Queues `pump` for the thread; takes a short lock, never waits for work.
  void Schedule(std::shared_ptr<ObservePump> pump);

 private:
  void Run();

  Mutex mu_;
  CondVar wake_;
  std::vector<std::shared_ptr<ObservePump>> ready_ ABSL_GUARDED_BY(mu_);
  bool idle_ ABSL_GUARDED_BY(mu_) = false;  // waiting on wake_
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

class ObservePump : public std::enable_shared_from_this<ObservePump> {
 public:
  // `writer` must outlive the pump's scheduling (the server destroys it
  // after every stream is done).
  ObservePump(ObserveWriter* writer,
              grpc::ServerWriteReactor<grpc::ByteBuffer>* stream,
              grpc::CallbackServerContext* context)
      : writer_(writer), stream_(stream), context_(context) {}

  // Starts pumping from `sub`.
  void Start(std::unique_ptr<TapSubscription> sub);
  // An event was buffered or the subscription ended (its on_ready): hands
  // the pump to the writer unless it is scheduled already. Lock-free.
  void Ready();
  // The stream's last write completed (gRPC's thread).
  void WriteDone(bool ok);
  // Ends the stream with `status` (once; later calls do nothing).
  void Finish(const grpc::Status& status);
  // The stream is done: nothing touches it from now on. Returns the
  // subscription, for the caller to end outside the pump's lock.
  std::unique_ptr<TapSubscription> Detach();

  // The writer's turn: the next event onto the stream, or the stream's end.
  void Advance();

 private:
  void FinishLocked(const grpc::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  ObserveWriter* const writer_;
  std::atomic<bool> scheduled_{false};
  Mutex mu_;
  grpc::ServerWriteReactor<grpc::ByteBuffer>* stream_ ABSL_GUARDED_BY(mu_);
  grpc::CallbackServerContext* const context_;
  std::unique_ptr<TapSubscription> sub_ ABSL_GUARDED_BY(mu_);
  grpc::ByteBuffer out_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_TAP_OBSERVE_PUMP_H_
