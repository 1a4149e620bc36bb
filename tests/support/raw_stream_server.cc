#include "tests/support/raw_stream_server.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/base/mutex.h"

namespace mesh::testing {

// One call: read the request, write the script's messages one by one, then
// wait for the client (or the server's shutdown) to cancel.
class RawStreamServer::Reactor final : public grpc::ServerGenericBidiReactor {
 public:
  Reactor(RawStreamServer* owner, std::string method)
      : owner_(owner), method_(std::move(method)) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client went away before its request
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "no request"));
      return;
    }
    int stream;
    {
      internal::MutexLock lock(&owner_->mu_);
      stream = owner_->streams_[method_]++;
    }
    messages_ = owner_->script_(method_, stream);
    WriteNext();
  }

  void OnWriteDone(bool ok) override {
    if (!ok) return;  // cancelled: OnCancel finishes
    {
      internal::MutexLock lock(&owner_->mu_);
      ++owner_->written_[method_];
    }
    WriteNext();
  }

  void OnCancel() override {
    {
      internal::MutexLock lock(&owner_->mu_);
      ++owner_->cancelled_[method_];
    }
    Finish(grpc::Status::CANCELLED);
  }

  void OnDone() override { delete this; }

 private:
  void WriteNext() {
    if (next_ >= messages_.size()) return;  // stays open
    grpc::Slice slice(messages_[next_++]);
    out_ = grpc::ByteBuffer(&slice, 1);
    StartWrite(&out_);
  }

  RawStreamServer* const owner_;
  const std::string method_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer out_;
  std::vector<std::string> messages_;
  size_t next_ = 0;
};

class RawStreamServer::Service final : public grpc::CallbackGenericService {
 public:
  explicit Service(RawStreamServer* owner) : owner_(owner) {}
  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    return new Reactor(owner_, context->method());
  }

 private:
  RawStreamServer* const owner_;
};

std::unique_ptr<RawStreamServer> RawStreamServer::Start(Script script) {
  std::unique_ptr<RawStreamServer> server(new RawStreamServer());
  server->script_ = std::move(script);
  server->service_ = std::make_unique<Service>(server.get());
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &server->port_);
  builder.RegisterCallbackGenericService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    std::fprintf(stderr, "RawStreamServer: cannot listen on 127.0.0.1\n");
    std::abort();
  }
  return server;
}

RawStreamServer::~RawStreamServer() {
  // Cancels the open calls at once; their reactors finish in OnCancel.
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
}

std::string RawStreamServer::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

int RawStreamServer::streams(const std::string& method) const {
  internal::MutexLock lock(&mu_);
  auto it = streams_.find(method);
  return it == streams_.end() ? 0 : it->second;
}

int RawStreamServer::cancelled(const std::string& method) const {
  internal::MutexLock lock(&mu_);
  auto it = cancelled_.find(method);
  return it == cancelled_.end() ? 0 : it->second;
}

int RawStreamServer::written(const std::string& method) const {
  internal::MutexLock lock(&mu_);
  auto it = written_.find(method);
  return it == written_.end() ? 0 : it->second;
}

}  // namespace mesh::testing
