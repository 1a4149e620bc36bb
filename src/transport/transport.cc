#include "mesh/transport.h"

#include <utility>

namespace mesh {
namespace {

class ClosedStream final : public TransportStream {
 public:
  void Write(std::string) override {}
  void WritesDone() override {}
  void Read() override {}
  void Cancel() override {}
};

}  // namespace

std::unique_ptr<TransportStream> Transport::StartStream(
    const Endpoint& endpoint, TransportRequest request,
    TransportStreamObserver* observer) {
  (void)endpoint;
  TransportResponse response;
  response.status = absl::UnimplementedError("this transport cannot stream (" +
                                             request.path + ")");
  response.never_sent = true;
  observer->OnClose(std::move(response));
  return std::make_unique<ClosedStream>();
}

}  // namespace mesh
