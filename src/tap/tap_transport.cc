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

// Reports one tapped stream: ResponseInit at its headers, ResponseEnd at
// its close with the messages and bytes received. Owns itself; gone once
// OnClose has returned.
class TappedStreamObserver final : public TransportStreamObserver {
 public:
  TappedStreamObserver(TapExchange exchange, TransportStreamObserver* inner)
      : exchange_(std::move(exchange)), inner_(inner) {}

  void OnHeaders(Metadata headers) override {
    exchange_.ResponseInit(headers, 200);
    inner_->OnHeaders(std::move(headers));
  }
  void OnReadDone(bool ok, std::string message) override {
    if (ok) {
      ++messages_;
      bytes_ += message.size();
    }
    inner_->OnReadDone(ok, std::move(message));
  }
  void OnWriteDone(bool ok) override { inner_->OnWriteDone(ok); }
  void OnClose(TransportResponse response) override {
    TapResponse tapped = TapResponseOf(response);
    tapped.response_bytes = bytes_;
    tapped.response_messages = messages_;
    exchange_.End(tapped);
    TransportStreamObserver* inner = inner_;
    delete this;
    inner->OnClose(std::move(response));
  }

 private:
  TapExchange exchange_;
  TransportStreamObserver* const inner_;
  uint64_t messages_ = 0;
  uint64_t bytes_ = 0;
};

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

  std::unique_ptr<TransportStream> StartStream(
      const Endpoint& endpoint, TransportRequest request,
      TransportStreamObserver* observer) override {
    if (hub_->active()) {
      TapRequestHead head{request.method,  request.scheme, request.authority,
                          request.path,    &endpoint,      request.route_labels,
                          request.attempt, request.hedge};
      TapExchange exchange = hub_->Start(head, request.headers);
      if (exchange.tapped()) {
        observer = new TappedStreamObserver(std::move(exchange), observer);
      }
    }
    return inner_->StartStream(endpoint, std::move(request), observer);
  }

  void RetainOnly(const std::vector<std::string>& addresses) override {
    inner_->RetainOnly(addresses);
  }

  std::vector<std::pair<std::string, std::string>> DescribeConnection(
      const std::string& address) const override {
    return inner_->DescribeConnection(address);
  }

  void Shutdown() override { inner_->Shutdown(); }

 private:
  // Out of line, so that the untapped path stays a small function.
  ABSL_ATTRIBUTE_NOINLINE void SendMaybeTapped(const Endpoint& endpoint,
                                               TransportRequest&& request,
                                               Callback&& done) {
    TapRequestHead head{request.method,  request.scheme, request.authority,
                        request.path,    &endpoint,      request.route_labels,
                        request.attempt, request.hedge};
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
  out.response_messages = response.status.ok() ? 1 : 0;
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
