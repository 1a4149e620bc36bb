#include "mesh/transport.h"

#include <utility>

#include "src/base/mutex.h"

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

TransportResponse Transport::SendAndWait(const Endpoint& endpoint,
                                         TransportRequest request) {
  TransportResponse response;
  internal::Notification done;
  Send(endpoint, std::move(request), [&](TransportResponse r) {
    response = std::move(r);
    done.Notify();
  });
  done.WaitForNotification();
  return response;
}

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
