#include "tests/support/policy_server.h"

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <utility>

#include "absl/strings/str_cat.h"
#include "linkerd/outbound.grpc.pb.h"

namespace mesh::testing {

namespace out = ::io::linkerd::proxy::outbound;

// One Watch call: reads the TrafficSpec, then writes what it is given, one
// message at a time, until ended or cancelled.
class PolicyServer::Reactor final : public grpc::ServerGenericBidiReactor {
 public:
  explicit Reactor(PolicyServer* owner) : owner_(owner) {
    StartRead(&request_);
  }

  // Keeps this alive past OnDone until Release (Push and End may finish
  // the call inline, whose OnDone takes the owner's lock: the owner holds
  // a reactor under its lock, then acts on it after).
  void Hold() {
    internal::MutexLock lock(&mu_);
    ++holds_;
  }
  void Release() {
    bool gone;
    {
      internal::MutexLock lock(&mu_);
      gone = --holds_ == 0 && done_;
    }
    if (gone) delete this;
  }

  // Queues one message.
  void Push(std::string bytes) {
    {
      internal::MutexLock lock(&mu_);
      if (ending_) return;
      queue_.push_back(std::move(bytes));
      if (writing_) return;
      writing_ = true;
      TakeNextLocked();
    }
    StartWrite(&out_);
  }

  // Ends the call with `status` once the message in flight is written.
  void End(grpc::Status status) {
    {
      internal::MutexLock lock(&mu_);
      if (ending_) return;
      ending_ = true;
      queue_.clear();
      if (writing_) {
        end_status_ = std::move(status);
        return;
      }
    }
    Finish(std::move(status));
  }

  void OnReadDone(bool ok) override {
    out::TrafficSpec spec;
    std::vector<grpc::Slice> slices;
    std::string bytes;
    if (ok && request_.Dump(&slices).ok()) {
      for (const grpc::Slice& s : slices) {
        bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
      }
    }
    if (!ok || !spec.ParseFromString(bytes)) {
      End(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no TrafficSpec"));
      return;
    }
    authority_ = spec.authority();
    std::optional<grpc::Status> refused;
    std::optional<std::string> policy;
    owner_->Opened(this, authority_, spec.source_workload(), &refused, &policy);
    if (refused.has_value()) return End(*std::move(refused));
    if (policy.has_value()) Push(*std::move(policy));
  }

  void OnWriteDone(bool ok) override {
    std::optional<grpc::Status> end;
    {
      internal::MutexLock lock(&mu_);
      if (ok && !queue_.empty()) {
        TakeNextLocked();
      } else {
        // Done writing (or the write failed: the call is cancelled). An end
        // asked for meanwhile finishes the call now; else OnCancel's will.
        writing_ = false;
        if (!end_status_.has_value()) return;
        end = std::move(end_status_);
        end_status_.reset();
      }
    }
    if (end.has_value()) {
      Finish(*std::move(end));
      return;
    }
    StartWrite(&out_);
  }

  void OnCancel() override { End(grpc::Status::CANCELLED); }

  void OnDone() override {
    if (!authority_.empty()) owner_->Closed(this, authority_);
    {
      internal::MutexLock lock(&mu_);
      done_ = true;
      if (holds_ > 0) return;  // the last Release deletes
    }
    delete this;
  }

 private:
  void TakeNextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    grpc::Slice slice(queue_.front());
    queue_.pop_front();
    out_ = grpc::ByteBuffer(&slice, 1);
  }

  PolicyServer* const owner_;
  grpc::ByteBuffer request_;
  std::string authority_;  // set before Opened, then read only
  internal::Mutex mu_;
  grpc::ByteBuffer out_;  // the write in flight
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool ending_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<grpc::Status> end_status_ ABSL_GUARDED_BY(mu_);
  int holds_ ABSL_GUARDED_BY(mu_) = 0;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
};

class PolicyServer::Service final : public grpc::CallbackGenericService {
 public:
  explicit Service(PolicyServer* owner) : owner_(owner) {}
  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    if (context->method() !=
        absl::StrCat("/", out::OutboundPolicies::service_full_name(),
                     "/Watch")) {
      // Not ours: as a server without the method answers.
      class Unimplemented final : public grpc::ServerGenericBidiReactor {
       public:
        Unimplemented() {
          Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, ""));
        }
        void OnDone() override { delete this; }
      };
      return new Unimplemented();
    }
    return new Reactor(owner_);
  }

 private:
  PolicyServer* const owner_;
};

std::unique_ptr<PolicyServer> PolicyServer::Start() {
  std::unique_ptr<PolicyServer> server(new PolicyServer());
  server->service_ = std::make_unique<Service>(server.get());
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &server->port_);
  builder.RegisterCallbackGenericService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    std::fprintf(stderr, "PolicyServer: cannot listen on 127.0.0.1\n");
    std::abort();
  }
  return server;
}

PolicyServer::~PolicyServer() {
  // Cancels the open watches at once; they end in OnCancel.
  server_->Shutdown(std::chrono::system_clock::now());
  server_->Wait();
}

std::string PolicyServer::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

void PolicyServer::Opened(Reactor* reactor, const std::string& authority,
                          const std::string& source_workload,
                          std::optional<grpc::Status>* refused,
                          std::optional<std::string>* policy) {
  internal::MutexLock lock(&mu_);
  ++watches_[authority];
  source_workloads_.push_back(source_workload);
  if (auto it = refused_.find(authority); it != refused_.end()) {
    *refused = it->second;
    return;
  }
  open_[authority].insert(reactor);
  if (auto it = policies_.find(authority); it != policies_.end()) {
    *policy = it->second;
  }
}

std::vector<PolicyServer::Reactor*> PolicyServer::HoldOpen(
    const std::string& authority) {
  std::vector<Reactor*> held(open_[authority].begin(), open_[authority].end());
  for (Reactor* r : held) r->Hold();
  return held;
}

void PolicyServer::Closed(Reactor* reactor, const std::string& authority) {
  internal::MutexLock lock(&mu_);
  open_[authority].erase(reactor);
}

void PolicyServer::Set(const std::string& authority,
                       const out::OutboundPolicy& policy) {
  std::string bytes = policy.SerializeAsString();
  std::vector<Reactor*> held;
  {
    internal::MutexLock lock(&mu_);
    refused_.erase(authority);
    policies_[authority] = bytes;
    held = HoldOpen(authority);
  }
  for (Reactor* r : held) {
    r->Push(bytes);
    r->Release();
  }
}

void PolicyServer::SendRaw(const std::string& authority,
                           const std::string& bytes) {
  std::vector<Reactor*> held;
  {
    internal::MutexLock lock(&mu_);
    held = HoldOpen(authority);
  }
  for (Reactor* r : held) {
    r->Push(bytes);
    r->Release();
  }
}

void PolicyServer::Refuse(const std::string& authority, grpc::Status status) {
  std::vector<Reactor*> held;
  {
    internal::MutexLock lock(&mu_);
    refused_[authority] = status;
    policies_.erase(authority);
    held = HoldOpen(authority);
  }
  for (Reactor* r : held) {
    r->End(status);
    r->Release();
  }
}

int PolicyServer::watches(const std::string& authority) const {
  internal::MutexLock lock(&mu_);
  auto it = watches_.find(authority);
  return it == watches_.end() ? 0 : it->second;
}

int PolicyServer::open(const std::string& authority) const {
  internal::MutexLock lock(&mu_);
  auto it = open_.find(authority);
  return it == open_.end() ? 0 : static_cast<int>(it->second.size());
}

std::vector<std::string> PolicyServer::source_workloads() const {
  internal::MutexLock lock(&mu_);
  return source_workloads_;
}

}  // namespace mesh::testing
