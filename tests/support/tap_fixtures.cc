#include "tests/support/tap_fixtures.h"

#include <arpa/inet.h>
#include <grpcpp/generic/generic_stub.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
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

RelayFrom127002::RelayFrom127002(int to_port) {
  listener_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr),
            0);
  EXPECT_EQ(listen(listener_, 1), 0);
  socklen_t len = sizeof addr;
  getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this, to_port] { Run(to_port); });
}

RelayFrom127002::~RelayFrom127002() {
  shutdown(listener_, SHUT_RDWR);
  close(listener_);
  stop_.store(true);
  thread_.join();
}

void RelayFrom127002::Run(int to_port) {
  int in = accept(listener_, nullptr, nullptr);
  if (in < 0) return;
  int out = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  from.sin_addr.s_addr = htonl(0x7f000002);  // 127.0.0.2
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(to_port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // 127.0.0.1
  if (bind(out, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      connect(out, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    close(in);
    close(out);
    return;
  }
  char buf[16384];
  // Bounded: at most 20 s of 10 ms polls.
  for (int i = 0; i < 2000 && !stop_.load(); ++i) {
    pollfd fds[2] = {{in, POLLIN, 0}, {out, POLLIN, 0}};
    if (poll(fds, 2, 10) < 0) break;
    bool closed = false;
    for (int k = 0; k < 2; ++k) {
      if (fds[k].revents == 0) continue;
      ssize_t n = read(fds[k].fd, buf, sizeof buf);
      if (n <= 0 || write(fds[1 - k].fd, buf, n) != n) closed = true;
    }
    if (closed) break;
  }
  close(in);
  close(out);
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

grpc::Status ObserveBytes(const std::string& target, const std::string& bytes) {
  grpc::GenericStub stub(
      grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
  grpc::CompletionQueue cq;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(&context, "/io.linkerd.proxy.tap.Tap/Observe", &cq);
  // Every step waits for its own completion (tags 1..4), in order; a failed
  // write or a read past the end is fine: the status tells.
  void* tag = nullptr;
  bool ok = false;
  auto step = [&](intptr_t want) {
    while (cq.Next(&tag, &ok) && reinterpret_cast<intptr_t>(tag) != want) {
    }
  };
  call->StartCall(reinterpret_cast<void*>(1));
  step(1);
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1);
  call->WriteLast(request, grpc::WriteOptions(), reinterpret_cast<void*>(2));
  step(2);
  grpc::ByteBuffer response;
  do {
    call->Read(&response, reinterpret_cast<void*>(3));
    step(3);
  } while (ok);
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(4));
  step(4);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

}  // namespace mesh::testing
