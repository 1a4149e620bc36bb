#include "src/channel/channel_core.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace mesh::internal {
namespace {

bool IsMetadataNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.';
}

void Fail(absl::AnyInvocable<void(CallResult)>& done, absl::Status status) {
  CallResult result;
  result.status = std::move(status);
  done(std::move(result));
}

}  // namespace

absl::Status ValidateMethod(absl::string_view method) {
  size_t second = method.size() > 1 ? method.find('/', 1) : 0;
  if (method.empty() || method[0] != '/' || second == absl::string_view::npos ||
      second <= 1 || second + 1 >= method.size() ||
      method.find('/', second + 1) != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "method '", method, "' must look like /package.Service/Method"));
  }
  return absl::OkStatus();
}

absl::Status ValidateMetadata(const Metadata& metadata) {
  for (const auto& [name, value] : metadata) {
    bool ok = !name.empty() && name[0] != ':';
    for (char c : name) ok = ok && IsMetadataNameChar(c);
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "metadata name '", name, "' must be lower case [0-9a-z_.-]"));
    }
    // gRPC and HTTP/2 own these; an application value would be dropped or
    // would corrupt the call.
    if (absl::StartsWith(name, "grpc-") || name == "content-type" ||
        name == "te" || name == "host" || name == "connection" ||
        name == "user-agent") {
      return absl::InvalidArgumentError(absl::StrCat(
          "metadata name '", name, "' is reserved by gRPC/HTTP/2"));
    }
    bool binary =
        name.size() > 4 && name.compare(name.size() - 4, 4, "-bin") == 0;
    if (!binary) {
      for (char c : value) {
        if (c < 0x20 || c > 0x7e) {
          return absl::InvalidArgumentError(absl::StrCat(
              "metadata '", name,
              "' has a non-printable value; binary names end in -bin"));
        }
      }
    }
  }
  return absl::OkStatus();
}

CallOutcome OutcomeOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
      return CallOutcome::kEndpointFailure;
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kCancelled:
      return CallOutcome::kCancelled;
    // Linkerd's default failure classes (besides the two above).
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnknown:
      return CallOutcome::kFailure;
    default:
      return CallOutcome::kSuccess;
  }
}

ChannelCore::ChannelCore(std::string target, const ChannelOptions& options,
                         std::shared_ptr<MeshCore> mesh,
                         std::shared_ptr<Destination> destination,
                         std::unique_ptr<Balancer> balancer)
    : target_(std::move(target)),
      options_(options),
      mesh_(std::move(mesh)),
      destination_(std::move(destination)),
      balancer_(std::move(balancer)) {
  destination_->Attach(balancer_.get());
}

ChannelCore::~ChannelCore() { destination_->Detach(balancer_.get()); }

// One logical call across its attempts.
struct ChannelCore::Call {
  std::string method;
  std::string body;  // kept for replay when the route is retryable
  Metadata metadata;
  absl::Time deadline = absl::InfiniteFuture();
  Destination::Routes routes;  // keeps `route` alive
  const CompiledRoute* route = nullptr;
  bool replayable = false;
  std::string last_endpoint;  // the next attempt prefers another
  absl::AnyInvocable<void(CallResult)> done;
};

void ChannelCore::CallRawAsync(absl::string_view method, std::string request,
                               const CallOptions& options,
                               absl::AnyInvocable<void(CallResult)> done) {
  if (absl::Status s = ValidateMethod(method); !s.ok()) {
    return Fail(done, std::move(s));
  }
  if (absl::Status s = ValidateMetadata(options.metadata); !s.ok()) {
    return Fail(done, std::move(s));
  }
  if (mesh_->shut_down()) {
    return Fail(done, absl::UnavailableError(absl::StrCat(
                          "mesh is shut down; call to '", target_, "'")));
  }
  auto call = std::make_unique<Call>();
  call->routes = destination_->routes();
  call->route = &call->routes.table->Match({"POST", method, &options.metadata});
  // The route's timeout bounds the call with all its attempts; the caller's,
  // if shorter, wins.
  absl::Duration timeout = options.timeout != absl::InfiniteDuration()
                               ? options.timeout
                               : options_.default_timeout;
  timeout = std::min(timeout, call->route->timeout);
  if (timeout != absl::InfiniteDuration()) {
    call->deadline = absl::Now() + timeout;
  }
  call->method = std::string(method);
  call->metadata = options.metadata;
  call->body = std::move(request);
  call->replayable =
      call->route->is_retryable && call->body.size() <= kMaxReplayBytes;
  call->done = std::move(done);
  call->routes.budget->Deposit();
  StartAttempt(std::move(call));
}

void ChannelCore::StartAttempt(std::unique_ptr<Call> call) {
  absl::StatusOr<CallHandle> picked = balancer_->Pick();
  // A retry prefers an endpoint other than the one that just failed.
  for (int i = 0; i < 2 && picked.ok() && !call->last_endpoint.empty() &&
                  picked->endpoint().address == call->last_endpoint;
       ++i) {
    absl::StatusOr<CallHandle> other = balancer_->Pick();
    if (other.ok()) picked = std::move(other);
  }
  if (!picked.ok()) return Fail(call->done, destination_->NoEndpointsStatus());

  TransportRequest req;
  req.authority = target_;
  req.path = call->method;
  // Only a call that may be retried keeps copies for the next attempt.
  req.headers = call->replayable ? call->metadata : std::move(call->metadata);
  req.body = call->replayable ? call->body : std::move(call->body);
  req.deadline = call->deadline;
  const Endpoint& endpoint = picked->endpoint();
  destination_->transport().Send(
      endpoint, std::move(req),
      [self = shared_from_this(), handle = *std::move(picked),
       call = std::move(call)](TransportResponse response) mutable {
        std::string address = handle.endpoint().address;
        handle.Complete(OutcomeOf(response.status));
        if (call->replayable && IsRetryable(response.status) &&
            absl::Now() < call->deadline && !self->mesh_->shut_down() &&
            call->routes.budget->TryWithdraw()) {
          call->last_endpoint = std::move(address);
          self->StartAttempt(std::move(call));
          return;
        }
        CallResult result;
        result.endpoint = std::move(address);
        result.status = std::move(response.status);
        result.body = std::move(response.body);
        result.headers = std::move(response.headers);
        result.trailers = std::move(response.trailers);
        call->done(std::move(result));
      });
}

bool IsRetryable(const absl::Status& status) {
  // Linkerd's default failure classes, less DEADLINE_EXCEEDED: a timeout is
  // not retried (the route's deadline covers every attempt).
  switch (status.code()) {
    case absl::StatusCode::kDataLoss:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kUnknown:
      return true;
    default:
      return false;
  }
}

}  // namespace mesh::internal
