#include "tests/support/tap_fixtures.h"

#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/test_support.h"

namespace mesh::testing {

namespace tap = ::io::linkerd::proxy::tap;

TapMesh::TapMesh(const std::string& target, int backends_n, MeshOptions options)
    : backends(StartBackends(backends_n)),
      discovery(StaticDiscovery::Create()) {
  EXPECT_TRUE(discovery->SetEndpoints(target, EndpointsOf(backends)).ok());
  options.discovery = discovery;
  options.tap_address = "127.0.0.1:0";
  absl::StatusOr<std::unique_ptr<Mesh>> created = Mesh::Create(options);
  EXPECT_TRUE(created.ok()) << created.status();
  if (created.ok()) mesh = *std::move(created);
}

std::string TapMesh::tap_target() const {
  return "127.0.0.1:" + std::to_string(mesh->tap_port());
}

Traffic::Traffic(Channel& channel, Metadata metadata) {
  thread_ = std::thread([this, &channel, metadata = std::move(metadata)] {
    CallOptions options;
    options.metadata = metadata;
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    for (int i = 0;
         i < 200000 && !stop_.HasBeenNotified() && absl::Now() < deadline;
         ++i) {
      channel.CallRaw(i % 2 == 0 ? "/test.Echo/One" : "/test.Echo/Two", "hello",
                      options);
      sent_.fetch_add(1);
    }
  });
}

Traffic::~Traffic() { Stop(); }

void Traffic::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

tap::ObserveRequest AllRequests(uint32_t limit) {
  tap::ObserveRequest request;
  request.set_limit(limit);
  request.mutable_match()->mutable_all();
  return request;
}

Observed Observe(const std::shared_ptr<grpc::Channel>& channel,
                 const tap::ObserveRequest& request) {
  auto stub = tap::Tap::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
  auto reader = stub->Observe(&context, request);
  Observed out;
  tap::TapEvent event;
  while (reader->Read(&event)) out.events.push_back(event);
  out.status = reader->Finish();
  for (const auto& [k, v] : context.GetServerTrailingMetadata()) {
    out.trailers[std::string(k.data(), k.size())] =
        std::string(v.data(), v.size());
  }
  return out;
}

Observed Observe(const std::string& target,
                 const tap::ObserveRequest& request) {
  return Observe(
      grpc::CreateChannel(target, grpc::InsecureChannelCredentials()), request);
}

}  // namespace mesh::testing
