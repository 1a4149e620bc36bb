// GrpcTransport's streams (grpc_transport.h): one generic bidi reactor per
// stream, and the handle the mesh holds.
#include <grpcpp/generic/generic_stub.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>

#include "src/base/destroy_later.h"
#include "src/transport/byte_buffer_bytes.h"
#include "src/transport/grpc_call_parts.h"
#include "src/transport/grpc_callback_queue.h"
#include "src/transport/grpc_transport.h"

namespace mesh::internal {

// One stream: a generic bidi reactor (client-, server- and bidi-streaming
// methods look the same on the wire). It holds the call open (AddHold) so
// that operations may start from any thread, until a Read finds the end or
// it is cancelled; after that, writes and reads are refused here.
class GrpcTransport::Stream final
    : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>,
      public std::enable_shared_from_this<Stream> {
 public:
  // `tls_address`: the endpoint's, for a stream over TLS; else empty.
  Stream(GrpcTransport* transport, std::shared_ptr<grpc::Channel> channel,
         std::string tls_address, TransportStreamObserver* observer)
      : transport_(transport),
        channel_(std::move(channel)),
        tls_address_(std::move(tls_address)),
        observer_(observer) {}

  grpc::ClientContext& context() { return context_; }
  bool done() const { return done_.load(std::memory_order_acquire); }

  // Binds the reactor and starts the call (the context is prepared), then
  // follows the caller's cancellation: a cancel from here on, or one that
  // came before, cancels the call. A Release (Cancel, Shutdown) before the
  // call started removes its hold once it has.
  void Begin(const std::string& path, std::shared_ptr<Cancellation> cancel) {
    grpc::GenericStub stub(channel_);
    stub.PrepareBidiStreamingCall(&context_, path, grpc::StubOptions(), this);
    AddHold();
    StartCall();
    bool release_now;
    {
      MutexLock lock(&mu_);
      started_ = true;
      release_now = released_;
    }
    if (release_now) RemoveHold();
    if (cancel != nullptr) {
      uint64_t id =
          cancel->Watch([weak = std::weak_ptr<Stream>(shared_from_this())] {
            if (auto self = weak.lock()) self->Cancel();
          });
      bool done;
      {
        MutexLock lock(&mu_);
        done = done_.load(std::memory_order_acquire);
        if (!done) {
          cancel_ = cancel;
          cancel_watch_ = id;
        }
      }
      // OnDone has run and found no watch to drop: dropped here.
      if (done) cancel->Unwatch(id);
    }
  }

  // After the release the call is ending (OnClose follows): refused
  // silently, as TransportStream allows.
  void Write(std::string message) {
    MutexLock lock(&mu_);
    if (!released_) {
      grpc::Slice slice(std::move(message));
      write_buffer_ = grpc::ByteBuffer(&slice, 1);
      StartWrite(&write_buffer_);
    }
  }

  void WritesDone() {
    MutexLock lock(&mu_);
    if (!released_ && !writes_done_) {
      writes_done_ = true;
      StartWritesDone();
    }
  }

  void Read() {
    MutexLock lock(&mu_);
    if (!released_) StartRead(&read_buffer_);
  }

  // Once. TryCancel may finish the call inline (OnDone on this thread):
  // nothing here is held across it.
  void Cancel() {
    if (cancelled_.exchange(true)) return;
    context_.TryCancel();
    Release();
  }

  void OnReadInitialMetadataDone(bool ok) override {
    if (ok) {
      observer_->OnHeaders(ToMetadata(context_.GetServerInitialMetadata()));
    }
  }
  void OnReadDone(bool ok) override {
    std::string message;
    if (ok) message = BytesOf(read_buffer_);
    read_buffer_.Clear();
    // The end: no more operations, so gRPC may finish the call.
    if (!ok) Release();
    observer_->OnReadDone(ok, std::move(message));
  }
  void OnWriteDone(bool ok) override { observer_->OnWriteDone(ok); }
  void OnDone(const grpc::Status& status) override {
    std::shared_ptr<Cancellation> cancel;
    uint64_t watch = 0;
    {
      MutexLock lock(&mu_);
      done_.store(true, std::memory_order_release);
      cancel = std::move(cancel_);
      watch = cancel_watch_;
    }
    if (cancel != nullptr) cancel->Unwatch(watch);
    BeginFinishingCall(this);
    observer_->OnClose(ResponseOf(context_, status, tls_address_));
    EndFinishingCall();
    transport_->StreamEnded(this);
  }

 private:
  // Lets gRPC finish the call; later Writes and Reads are refused. Once.
  // Before the call started, Begin removes the hold when it has.
  void Release() {
    {
      MutexLock lock(&mu_);
      if (released_) return;
      released_ = true;
      if (!started_) return;
    }
    RemoveHold();
  }

  GrpcTransport* const transport_;
  // Before context_, which holds the channel too (see Call).
  const std::shared_ptr<grpc::Channel> channel_;
  const std::string tls_address_;
  TransportStreamObserver* const observer_;
  grpc::ClientContext context_;
  Mutex mu_;
  std::shared_ptr<Cancellation> cancel_ ABSL_GUARDED_BY(mu_);
  uint64_t cancel_watch_ ABSL_GUARDED_BY(mu_) = 0;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
  bool writes_done_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> done_{false};
  grpc::ByteBuffer write_buffer_;
  grpc::ByteBuffer read_buffer_;
};

// What the mesh holds: destroying it cancels a stream not yet done.
class GrpcTransport::StreamHandle final : public TransportStream {
 public:
  explicit StreamHandle(std::shared_ptr<Stream> stream)
      : stream_(std::move(stream)) {}
  ~StreamHandle() override {
    if (stream_ != nullptr && !stream_->done()) stream_->Cancel();
  }
  void Write(std::string message) override {
    if (stream_) stream_->Write(std::move(message));
  }
  void WritesDone() override {
    if (stream_) stream_->WritesDone();
  }
  void Read() override {
    if (stream_) stream_->Read();
  }
  void Cancel() override {
    if (stream_) stream_->Cancel();
  }

 private:
  const std::shared_ptr<Stream> stream_;  // null: closed at its start
};

std::unique_ptr<TransportStream> GrpcTransport::StartStream(
    const Endpoint& endpoint, TransportRequest request,
    TransportStreamObserver* observer) {
  PinGrpcCallbackQueue();
  std::shared_ptr<grpc::Channel> channel;
  bool tls = false;
  absl::Status error;
  {
    MutexLock lock(&mu_);
    if (shutdown_) {
      error = absl::UnavailableError("transport is shut down");
    } else {
      absl::StatusOr<std::shared_ptr<grpc::Channel>> found =
          ChannelFor(endpoint, &tls);
      if (found.ok()) {
        channel = *std::move(found);
      } else {
        error = found.status();
      }
    }
  }
  std::shared_ptr<Stream> stream;
  if (error.ok()) {
    // Prepared before it is published: Shutdown may cancel it from then on.
    stream = std::make_shared<Stream>(this, std::move(channel),
                                      tls ? endpoint.address : std::string(),
                                      observer);
    Prepare(stream->context(), endpoint, request);
    MutexLock lock(&mu_);
    if (shutdown_) {
      error = absl::UnavailableError("transport is shut down");
    } else {
      streams_.emplace(stream.get(), stream);
    }
  }
  if (!error.ok()) {
    if (stream != nullptr) DestroyLater([stream = std::move(stream)] {});
    observer->OnClose(NotSent(std::move(error)));
    return std::make_unique<StreamHandle>(nullptr);
  }
  stream->Begin(request.path, std::move(request.cancel));
  return std::make_unique<StreamHandle>(std::move(stream));
}

void GrpcTransport::CancelStream(Stream& stream) { stream.Cancel(); }

void GrpcTransport::StreamEnded(Stream* stream) {
  std::shared_ptr<Stream> owned;
  {
    MutexLock lock(&mu_);
    auto it = streams_.find(stream);
    owned = std::move(it->second);
    streams_.erase(it);
  }
  // Not on this gRPC thread: the stream holds a grpc::Channel, and a
  // TryCancel that finished it inline may still hold its context's lock.
  DestroyLater([owned = std::move(owned)] {});
}

}  // namespace mesh::internal
