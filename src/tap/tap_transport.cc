#include "src/tap/tap_transport.h"

#include <utility>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/strings/numbers.h"

namespace mesh::internal {
namespace {

// HTTP/2 error codes (RFC 9113, section 7).
constexpr uint32_t kH2InternalError = 2;
constexpr uint32_t kH2RefusedStream = 7;
constexpr uint32_t kH2Cancel = 8;

bool FindGrpcStatus(const Metadata& metadata, uint32_t* code) {
  for (const auto& [name, value] : metadata) {
    if (name == "grpc-status") return absl::SimpleAtoi(value, code);
  }
  return false;
}

class TapTransport final : public Transport {
 public:
  TapTransport(std::unique_ptr<Transport> inner, std::shared_ptr<TapHub> hub)
      : inner_(std::move(inner)), hub_(std::move(hub)) {}

  void Send(const Endpoint& endpoint, TransportRequest request,
            Callback done) override {
    if (ABSL_PREDICT_TRUE(!hub_->active())) {
      inner_->Send(endpoint, std::move(request), std::move(done));
      return;
    }
    SendMaybeTapped(endpoint, std::move(request), std::move(done));
  }

  void RetainOnly(const std::vector<std::string>& addresses) override {
    inner_->RetainOnly(addresses);
  }

  void Shutdown() override { inner_->Shutdown(); }

 private:
  // Out of line, so that the untapped path stays a small function.
  ABSL_ATTRIBUTE_NOINLINE void SendMaybeTapped(const Endpoint& endpoint,
                                               TransportRequest&& request,
                                               Callback&& done) {
    TapRequestHead head{request.method, request.scheme, request.authority,
                        request.path,   &endpoint,      request.route_labels};
    TapExchange exchange = hub_->Start(head, request.headers);
    if (!exchange.tapped()) {
      inner_->Send(endpoint, std::move(request), std::move(done));
      return;
    }
    inner_->Send(endpoint, std::move(request),
                 [exchange = std::move(exchange),
                  done = std::move(done)](TransportResponse response) mutable {
                   exchange.Finish(TapResponseOf(response));
                   done(std::move(response));
                 });
  }

  const std::unique_ptr<Transport> inner_;
  const std::shared_ptr<TapHub> hub_;
};

}  // namespace

TapResponse TapResponseOf(const TransportResponse& response) {
  TapResponse out;
  out.headers = &response.headers;
  out.trailers = &response.trailers;
  out.response_bytes = response.body.size();
  if (response.http_status > 0) {
    out.http_status = static_cast<uint32_t>(response.http_status);
  } else if (!response.headers.empty() || response.status.ok()) {
    out.http_status = 200;
  }
  absl::StatusCode code = response.status.code();
  if ((code == absl::StatusCode::kCancelled ||
       code == absl::StatusCode::kUnavailable) &&
      response.http_status == 0 && response.headers.empty()) {
    out.reset_error_code = code == absl::StatusCode::kCancelled ? kH2Cancel
                           : response.never_sent ? kH2RefusedStream
                                                 : kH2InternalError;
    return out;
  }
  uint32_t grpc_status = 0;
  if (FindGrpcStatus(response.trailers, &grpc_status) ||
      FindGrpcStatus(response.headers, &grpc_status)) {
    out.grpc_status = grpc_status;
  } else {
    out.grpc_status = static_cast<uint32_t>(code);
  }
  return out;
}

std::unique_ptr<Transport> NewTapTransport(std::unique_ptr<Transport> inner,
                                           std::shared_ptr<TapHub> hub) {
  return std::make_unique<TapTransport>(std::move(inner), std::move(hub));
}

TapSwitch::TapSwitch(std::unique_ptr<Transport> inner,
                     std::shared_ptr<TapHub> hub)
    : hub_(hub),
      inner_(inner.get()),
      tapped_(NewTapTransport(std::move(inner), std::move(hub))) {}

}  // namespace mesh::internal
