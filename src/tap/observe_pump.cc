#include "src/tap/observe_pump.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "linkerd/tap.pb.h"
#include "src/tap/observe_convert.h"

namespace mesh::internal {

ObserveWriter::ObserveWriter() : thread_([this] { Run(); }) {}

ObserveWriter::~ObserveWriter() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
  }
  wake_.Signal();
  thread_.join();
}

void ObserveWriter::Schedule(std::shared_ptr<ObservePump> pump) {
  bool wake;
  {
    MutexLock lock(&mu_);
    ready_.push_back(std::move(pump));
    wake = std::exchange(idle_, false);
  }
  // A futex wake only when the thread sleeps: under load it is busy and a
  // request's hand-over is a push under a short lock.
  if (wake) wake_.Signal();
}

void ObserveWriter::Run() {
  std::vector<std::shared_ptr<ObservePump>> batch;
  while (true) {
    {
      MutexLock lock(&mu_);
      while (ready_.empty() && !stop_) {
        idle_ = true;
        wake_.Wait(&mu_);
      }
      if (stop_) return;
      batch.swap(ready_);
    }
    for (const std::shared_ptr<ObservePump>& pump : batch) pump->Advance();
    batch.clear();
  }
}

void ObservePump::Start(std::unique_ptr<TapSubscription> sub) {
  {
    MutexLock lock(&mu_);
    sub_ = std::move(sub);
  }
  Ready();
}

void ObservePump::Ready() {
  if (!scheduled_.exchange(true, std::memory_order_acq_rel)) {
    writer_->Schedule(shared_from_this());
  }
}

void ObservePump::WriteDone(bool ok) {
  {
    MutexLock lock(&mu_);
    writing_ = false;
    // A failed write: the client went away (OnCancel says so too).
    if (!ok) return FinishLocked(grpc::Status::CANCELLED);
  }
  Ready();
}

void ObservePump::Finish(const grpc::Status& status) {
  MutexLock lock(&mu_);
  FinishLocked(status);
}

std::unique_ptr<TapSubscription> ObservePump::Detach() {
  MutexLock lock(&mu_);
  stream_ = nullptr;
  return std::move(sub_);
}

void ObservePump::Advance() {
  // Cleared first: an event buffered from here on schedules the pump again.
  scheduled_.store(false, std::memory_order_release);
  MutexLock lock(&mu_);
  if (stream_ == nullptr || finished_ || writing_ || sub_ == nullptr) return;
  std::optional<TapEvent> event = sub_->Next(absl::ZeroDuration());
  if (event) {
    std::string bytes = TapEventToProto(*event).SerializeAsString();
    grpc::Slice slice(bytes);
    out_ = grpc::ByteBuffer(&slice, 1);
    writing_ = true;
    stream_->StartWrite(&out_);
  } else if (sub_->done()) {
    FinishLocked(grpc::Status::OK);  // the limit's last exchange ended
  }
  // Otherwise the subscription's on_ready calls Ready() when there is more.
}

void ObservePump::FinishLocked(const grpc::Status& status) {
  if (stream_ == nullptr || finished_) return;
  finished_ = true;
  context_->AddTrailingMetadata(
      "mesh-tap-dropped-events",
      absl::StrCat(sub_ != nullptr ? sub_->dropped() : 0));
  stream_->Finish(status);
}

}  // namespace mesh::internal
