// Calls through a mesh::Channel to real gRPC backends on 127.0.0.1.
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/wrappers.pb.h>

#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "src/base/mutex.h"
#include "tests/support/test_support.h"

namespace mesh {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr char kTarget[] = "echo.test:7000";
constexpr char kMethod[] = "/test.Echo/Say";

class ChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    discovery_ = StaticDiscovery::Create();
    MeshOptions options;
    options.discovery = discovery_;
    auto m = Mesh::Create(options);
    ASSERT_TRUE(m.ok()) << m.status();
    mesh_ = *std::move(m);
  }

  std::unique_ptr<Channel> NewChannel(const ChannelOptions& o = {}) {
    auto c = mesh_->NewChannel(kTarget, o);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? *std::move(c) : nullptr;
  }

  std::shared_ptr<StaticDiscovery> discovery_;
  std::unique_ptr<Mesh> mesh_;
};

TEST_F(ChannelTest, CallsSucceedAcrossThreeBackends) {
  auto backends = testing::StartBackends(3);
  ASSERT_TRUE(
      discovery_->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  auto channel = NewChannel();
  std::map<std::string, int> served;
  for (int i = 0; i < 90; ++i) {
    CallResult r = channel->CallRaw(kMethod, "ping " + std::to_string(i));
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_EQ(r.body, "ping " + std::to_string(i));
    ++served[r.endpoint];
  }
  // Every backend served some calls and the counts agree with the servers'.
  for (const auto& b : backends) {
    EXPECT_GT(served[b->address()], 0) << b->address();
    EXPECT_EQ(b->calls_received(), served[b->address()]);
  }
}

TEST_F(ChannelTest, TypedCallsAndMetadataReachTheServer) {
  auto backends = testing::StartBackends(1);
  ASSERT_TRUE(
      discovery_->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  auto channel = NewChannel();
  google::protobuf::StringValue request, response;
  request.set_value("hello mesh");
  EXPECT_TRUE(channel->Call(kMethod, request, &response).ok());
  EXPECT_EQ(response.value(), "hello mesh");

  CallOptions opts;
  opts.metadata = {{"echo-request-id", "42"}};
  CallResult r = channel->CallRaw(kMethod, "x", opts);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_THAT(r.headers, Contains(Pair("echo-request-id", "42")));

  internal::Notification done;
  absl::Status async_status = absl::UnknownError("not run");
  google::protobuf::StringValue async_response;
  channel->CallAsync(kMethod, request, &async_response, {},
                     [&](absl::Status s) {
                       async_status = s;
                       done.Notify();
                     });
  done.WaitForNotification();
  EXPECT_TRUE(async_status.ok()) << async_status;
  EXPECT_EQ(async_response.value(), "hello mesh");
}

TEST_F(ChannelTest, ServerStatusIsPassedThrough) {
  auto backends = testing::StartBackends(1);
  backends[0]->set_status(grpc::StatusCode::NOT_FOUND);
  ASSERT_TRUE(
      discovery_->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  CallResult r = NewChannel()->CallRaw(kMethod, "x");
  EXPECT_EQ(r.status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(r.status.message()), HasSubstr("configured to fail"));
}

TEST_F(ChannelTest, DeadlineExceededOnSlowBackend) {
  auto backends = testing::StartBackends(1);
  backends[0]->set_delay(absl::Seconds(5));
  ASSERT_TRUE(
      discovery_->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  auto channel = NewChannel();
  CallOptions opts;
  opts.timeout = absl::Milliseconds(50);
  EXPECT_EQ(channel->CallRaw(kMethod, "x", opts).status.code(),
            absl::StatusCode::kDeadlineExceeded);

  ChannelOptions with_default;
  with_default.default_timeout = absl::Milliseconds(50);
  EXPECT_EQ(NewChannel(with_default)->CallRaw(kMethod, "x").status.code(),
            absl::StatusCode::kDeadlineExceeded);
}

TEST_F(ChannelTest, NoEndpointsFailsAfterFailFastNamingTheTarget) {
  ChannelOptions options;
  options.fail_fast_timeout = absl::Milliseconds(50);
  auto channel = NewChannel(options);
  CallResult before = channel->CallRaw(kMethod, "x");
  EXPECT_EQ(before.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(before.status.message()), HasSubstr(kTarget));
  EXPECT_THAT(std::string(before.status.message()), HasSubstr("not answered"));
  EXPECT_THAT(std::string(before.status.message()), HasSubstr("waited 50ms"));

  auto backends = testing::StartBackends(1);
  ASSERT_TRUE(
      discovery_->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  ASSERT_TRUE(channel->CallRaw(kMethod, "x").status.ok());

  ASSERT_TRUE(
      discovery_->Update(kTarget, EndpointUpdate::NoEndpoints(true)).ok());
  CallResult empty = channel->CallRaw(kMethod, "x");
  EXPECT_EQ(empty.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(empty.status.message()),
              HasSubstr(std::string("no endpoints for target '") + kTarget));
  EXPECT_EQ(empty.endpoint, "");

  ASSERT_TRUE(
      discovery_->Update(kTarget, EndpointUpdate::NoEndpoints(false)).ok());
  EXPECT_THAT(std::string(channel->CallRaw(kMethod, "x").status.message()),
              HasSubstr("does not exist"));
  EXPECT_EQ(backends[0]->calls_received(), 1);
}

TEST_F(ChannelTest, BadInputGetsClearErrors) {
  for (const char* target : {"", "books", "books:0", "books:70000"}) {
    auto c = mesh_->NewChannel(target);
    EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument) << target;
  }
  ChannelOptions bad_balancer;
  bad_balancer.balancer.decay = absl::ZeroDuration();
  EXPECT_THAT(
      std::string(mesh_->NewChannel(kTarget, bad_balancer).status().message()),
      HasSubstr("decay"));

  auto backends = testing::StartBackends(1);
  std::vector<Endpoint> good = testing::EndpointsOf(backends);
  ASSERT_TRUE(discovery_->SetEndpoints(kTarget, good).ok());
  auto channel = NewChannel();

  Endpoint zero;
  zero.address = "127.0.0.1:1";
  zero.weight = 0;
  EXPECT_THAT(std::string(discovery_->SetEndpoints(kTarget, {zero}).message()),
              HasSubstr("weight 0"));
  EXPECT_THAT(
      std::string(
          discovery_->SetEndpoints(kTarget, {good[0], good[0]}).message()),
      HasSubstr("twice"));
  Endpoint port;
  port.address = "127.0.0.1:70000";
  EXPECT_EQ(discovery_->SetEndpoints(kTarget, {port}).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(discovery_->SetEndpoints("", good).code(),
            absl::StatusCode::kInvalidArgument);
  // None of that disturbed the last good set.
  EXPECT_TRUE(channel->CallRaw(kMethod, "x").status.ok());

  EXPECT_THAT(
      std::string(channel->CallRaw("test.Echo/Say", "x").status.message()),
      HasSubstr("/package.Service/Method"));
  EXPECT_EQ(channel->CallRaw("/nomethod", "x").status.code(),
            absl::StatusCode::kInvalidArgument);
  CallOptions upper;
  upper.metadata = {{"X-Upper", "v"}};
  EXPECT_THAT(
      std::string(channel->CallRaw(kMethod, "x", upper).status.message()),
      HasSubstr("X-Upper"));
  CallOptions reserved;
  reserved.metadata = {{"grpc-timeout", "1S"}};
  EXPECT_THAT(
      std::string(channel->CallRaw(kMethod, "x", reserved).status.message()),
      HasSubstr("reserved"));
  EXPECT_EQ(backends[0]->calls_received(), 1);
}

TEST_F(ChannelTest, RouteTimeoutFromTheServiceConfigBoundsItsCalls) {
  auto backends = testing::StartBackends(1);
  backends[0]->set_delay(absl::Milliseconds(300));
  ASSERT_TRUE(
      discovery_->SetEndpoints(kTarget, testing::EndpointsOf(backends)).ok());
  auto channel = NewChannel();
  ServiceConfig config;
  Route slow;
  slow.name = "Slow";
  slow.condition = RequestMatch::Path("^/test.Echo/Slow$");
  slow.timeout = absl::Milliseconds(50);
  Route broken;
  broken.name = "Broken";
  broken.condition = RequestMatch::Path("(unclosed");
  broken.timeout = absl::Milliseconds(1);
  config.routes = {broken, slow};
  ASSERT_TRUE(discovery_->SetServiceConfig(kTarget, config).ok());
  ASSERT_TRUE(
      testing::WaitFor([&] { return channel->service_config().has_value(); }));
  // The matched route's 50 ms bounds the call; the same backend answers
  // other methods (default route, no timeout) after its 300 ms.
  EXPECT_EQ(channel->CallRaw("/test.Echo/Slow", "x").status.code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(channel->CallRaw(kMethod, "x").status.ok());
  // The broken route was dropped, not applied with its 1 ms.
  EXPECT_TRUE(channel->CallRaw("/test.Echo/Other", "x").status.ok());
  // A caller's shorter deadline still wins over a longer route timeout.
  config.routes[1].timeout = absl::Seconds(30);
  ASSERT_TRUE(discovery_->SetServiceConfig(kTarget, config).ok());
  CallOptions short_call;
  short_call.timeout = absl::Milliseconds(50);
  EXPECT_EQ(channel->CallRaw("/test.Echo/Slow", "x", short_call).status.code(),
            absl::StatusCode::kDeadlineExceeded);
}

TEST(MeshTest, CreateNeedsDiscovery) {
  auto m = Mesh::Create(MeshOptions{});
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(m.status().message()), HasSubstr("discovery"));
}

TEST(MeshTest, ChannelsForOneTargetShareDiscovery) {
  auto counting =
      std::make_shared<testing::CountingDiscovery>(StaticDiscovery::Create());
  MeshOptions options;
  options.discovery = counting;
  auto mesh = *Mesh::Create(options);
  auto a = *mesh->NewChannel(kTarget);
  auto b = *mesh->NewChannel(kTarget);
  auto other = *mesh->NewChannel("other.test:7000");
  EXPECT_EQ(counting->subscribes(), 2);
  EXPECT_EQ(counting->live(), 2);
  EXPECT_EQ(counting->config_subscribes(), 2);  // one profile stream each
  a.reset();
  EXPECT_EQ(counting->live(), 2);
  b.reset();  // the last channel for the target closes its stream
  EXPECT_EQ(counting->live(), 1);
  EXPECT_EQ(counting->config_live(), 1);
  auto again = *mesh->NewChannel(kTarget);
  EXPECT_EQ(counting->subscribes(), 3);
}

// A channel's picker is built by the control path: the backends a config
// splits to are subscribed when the config names them, before any call, and
// a backend a newer config drops is let go of without a call either.
TEST(MeshTest, SplitBackendsAreSubscribedWhenTheConfigNamesThem) {
  testing::CountedStaticMesh m;
  auto& statics = m.statics;
  auto& counting = m.counting;
  auto channel = *m.mesh->NewChannel(kTarget);
  EXPECT_EQ(counting->subscribes(), 1);  // the target itself
  ServiceConfig split;
  split.backends = {{"v1.books.test:7000", 1}, {"v2.books.test:7000", 1}};
  ASSERT_TRUE(statics->SetServiceConfig(kTarget, split).ok());
  EXPECT_TRUE(testing::WaitFor([&] { return counting->live() == 3; }))
      << counting->live() << " subscriptions live";
  EXPECT_EQ(counting->subscribes(), 3);
  split.backends = {{"v1.books.test:7000", 1}};
  ASSERT_TRUE(statics->SetServiceConfig(kTarget, split).ok());
  EXPECT_TRUE(testing::WaitFor([&] { return counting->live() == 2; }))
      << counting->live() << " subscriptions live";
  EXPECT_EQ(counting->subscribes(), 3);  // v1 kept, not made again
  channel.reset();
  EXPECT_TRUE(testing::WaitFor([&] { return counting->live() == 0; }))
      << counting->live() << " subscriptions live";
}

// Strings given in code reach Describe() as they are: invalid UTF-8 and
// control characters in labels, identities and route names must still make
// one valid JSON document (read back by protobuf's parser, which insists on
// UTF-8), bad bytes shown as U+FFFD.
TEST_F(ChannelTest, DescribeIsValidJsonWhateverTheStrings) {
  Endpoint e{"127.0.0.1:1"};
  e.labels["zone\xff"] = std::string("a\0b\xc3(", 5);
  e.tls_identity = "\xed\xa0\x80.id";
  ASSERT_TRUE(discovery_->SetEndpoints(kTarget, {e}).ok());
  ServiceConfig config;
  config.routes = {RouteBuilder("r\x80").Path("/a\xfe").Build()};
  ASSERT_TRUE(discovery_->SetServiceConfig(kTarget, config).ok());
  auto channel = NewChannel();
  ASSERT_TRUE(channel->WaitForEndpoints(absl::Seconds(5)).ok());
  ASSERT_TRUE(
      testing::WaitFor([&] { return channel->service_config().has_value(); }));
  std::string json = mesh_->Describe();
  google::protobuf::Value parsed;
  auto status = google::protobuf::util::JsonStringToMessage(json, &parsed);
  ASSERT_TRUE(status.ok()) << status << "\n" << json;
  EXPECT_THAT(json, HasSubstr("\"zone\\ufffd\":\"a\\u0000b\\ufffd(\""));
  EXPECT_THAT(json, HasSubstr("\"r\\ufffd\""));
}

}  // namespace
}  // namespace mesh
