// RoutingCombiner (src/discovery/linkerd/): which of a target's profile and
// policy routes it, as linkerd2-proxy decides, and when its calls may start.
#include "src/discovery/linkerd/routing_combiner.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mesh::internal::linkerd {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Records what the combiner delivers, by the first route's name ("-" for a
// config without routes).
class Recorder : public ServiceConfigObserver {
 public:
  void OnServiceConfig(const ServiceConfig& config) override {
    delivered.push_back(config.routes.empty() ? "-" : config.routes[0].name);
    events.push_back("config " + delivered.back());
    last = config;
  }
  void OnServiceConfigError(const absl::Status& status) override {
    errors.push_back(std::string(status.message()));
    events.push_back("error " + errors.back());
  }
  std::vector<std::string> delivered;
  std::vector<std::string> errors;
  std::vector<std::string> events;  // both, in order
  ServiceConfig last;
};

ServiceConfig Profile(const std::string& route_name = "", bool split = false) {
  ServiceConfig c;
  if (!route_name.empty()) {
    Route r;
    r.name = route_name;
    c.routes.push_back(r);
  }
  if (split) c.backends.push_back(WeightedBackend{"other:80", 1});
  return c;
}

PolicyConversion Policy(const std::string& route_name) {
  PolicyConversion p;
  p.parent = "Service ns/books";
  p.protocol = "grpc";
  Route r;
  r.name = route_name;
  p.config.routes.push_back(r);
  return p;
}

TEST(RoutingCombinerTest, WithoutAPolicyWatchTheProfileRoutesAtOnce) {
  Recorder rec;
  RoutingCombiner c(&rec);
  c.OnProfile(Profile());
  EXPECT_THAT(rec.delivered, ::testing::ElementsAre("-"));
  EXPECT_EQ(c.GetReport().routing, "default");
  EXPECT_EQ(c.GetReport().policy_state, "");
}

TEST(RoutingCombinerTest, APlainProfileWaitsForThePolicyWhichThenRoutes) {
  Recorder rec;
  RoutingCombiner c(&rec);
  c.SetWatching();
  c.OnProfile(Profile());
  EXPECT_THAT(rec.delivered, IsEmpty());  // calls wait for the policy
  EXPECT_EQ(c.GetReport().policy_state, "watching");
  c.OnPolicy(Policy("p1"));
  EXPECT_THAT(rec.delivered, ::testing::ElementsAre("p1"));
  EXPECT_EQ(c.GetReport().routing, "policy");
  EXPECT_EQ(c.GetReport().policy_state, "received");
  EXPECT_EQ(c.GetReport().policy_parent, "Service ns/books");
  c.OnPolicy(Policy("p2"));
  EXPECT_EQ(rec.delivered.back(), "p2");
}

TEST(RoutingCombinerTest, APolicyFirstWaitsForTheProfileUnlessItFails) {
  Recorder rec;
  RoutingCombiner c(&rec);
  c.SetWatching();
  c.OnPolicy(Policy("p"));
  EXPECT_THAT(rec.delivered, IsEmpty());  // the profile may override it
  c.OnProfile(Profile("profile-route"));
  EXPECT_THAT(rec.delivered, ::testing::ElementsAre("profile-route"));

  Recorder rec2;
  RoutingCombiner c2(&rec2);
  c2.SetWatching();
  c2.OnPolicy(Policy("p"));
  c2.OnProfileError(absl::UnavailableError("connection refused"));
  EXPECT_THAT(rec2.events,
              ::testing::ElementsAre("config p", "error connection refused"));
}

TEST(RoutingCombinerTest, AProfileWithRoutesOrASplitOverridesThePolicy) {
  for (bool split : {false, true}) {
    Recorder rec;
    RoutingCombiner c(&rec);
    c.SetWatching();
    c.OnPolicy(Policy("p"));
    c.OnProfile(split ? Profile("", true) : Profile("profile-route"));
    EXPECT_EQ(c.GetReport().routing, "profile");
    EXPECT_EQ(rec.delivered.back(), split ? "-" : "profile-route");
    const size_t n = rec.delivered.size();
    c.OnPolicy(Policy("p2"));  // overridden: nothing new delivered
    EXPECT_EQ(rec.delivered.size(), n);
    c.OnProfile(Profile());  // the override goes: the policy routes again
    EXPECT_EQ(rec.delivered.back(), "p2");
  }
}

TEST(RoutingCombinerTest, NoPolicyForGoodLeavesTheProfile) {
  Recorder rec;
  RoutingCombiner c(&rec);
  c.SetWatching();
  c.OnProfile(Profile());
  c.OnPolicyGone(absl::NotFoundError("no such service"));
  EXPECT_THAT(rec.delivered, ::testing::ElementsAre("-"));
  EXPECT_THAT(c.GetReport().policy_state,
              HasSubstr("none (NOT_FOUND: no such service)"));
  // A policy received before it went stops routing.
  Recorder rec2;
  RoutingCombiner c2(&rec2);
  c2.SetWatching();
  c2.OnProfile(Profile());
  c2.OnPolicy(Policy("p"));
  c2.OnPolicyGone(absl::UnimplementedError(""));
  EXPECT_THAT(rec2.delivered, ::testing::ElementsAre("p", "-"));
}

TEST(RoutingCombinerTest, AFailingPolicyStreamLetsTheProfileRouteMeanwhile) {
  Recorder rec;
  RoutingCombiner c(&rec);
  c.SetWatching();
  c.OnProfile(Profile());
  c.OnPolicyError(absl::UnavailableError("connection refused"));
  EXPECT_THAT(rec.delivered, ::testing::ElementsAre("-"));
  // The config before the error: an error before any config fails the
  // calls waiting for one.
  EXPECT_THAT(rec.events,
              ::testing::ElementsAre("config -", "error connection refused"));
  EXPECT_EQ(c.GetReport().policy_error, "connection refused");
  c.OnPolicyError(absl::UnavailableError("again"));  // nothing new
  EXPECT_EQ(rec.delivered.size(), 1u);
  c.OnPolicy(Policy("p"));
  EXPECT_EQ(rec.delivered.back(), "p");
  EXPECT_EQ(c.GetReport().policy_error, "");
  // Once a policy is in force, an error keeps it.
  c.OnPolicyError(absl::UnavailableError("reset"));
  EXPECT_EQ(rec.delivered.back(), "p");
  EXPECT_EQ(rec.errors.back(), "reset");
}

TEST(RoutingCombinerTest, AnErrorBeforeAnyConfigWaitsForTheOtherStream) {
  // The policy server refuses connections before the profile has come: the
  // calls waiting for routes must not fail, as the profile will route them.
  Recorder rec;
  RoutingCombiner c(&rec);
  c.SetWatching();
  c.OnPolicyError(absl::UnavailableError("connection refused"));
  EXPECT_THAT(rec.events, IsEmpty());
  EXPECT_EQ(c.GetReport().policy_error, "connection refused");
  c.OnProfile(Profile());
  EXPECT_THAT(rec.events, ::testing::ElementsAre("config -"));
  // The same the other way round: the profile's stream fails first.
  Recorder rec2;
  RoutingCombiner c2(&rec2);
  c2.SetWatching();
  c2.OnProfileError(absl::UnavailableError("profile refused"));
  EXPECT_THAT(rec2.events, IsEmpty());
  c2.OnPolicy(Policy("p"));
  EXPECT_THAT(rec2.events, ::testing::ElementsAre("config p"));
  // Both fail: now the error goes on, and the waiting calls fail with it.
  Recorder rec3;
  RoutingCombiner c3(&rec3);
  c3.SetWatching();
  c3.OnPolicyError(absl::UnavailableError("policy refused"));
  c3.OnProfileError(absl::UnavailableError("profile refused"));
  EXPECT_THAT(rec3.events, ::testing::ElementsAre("error profile refused"));
  // Without a policy watch, a profile error goes on at once, as before.
  Recorder rec4;
  RoutingCombiner c4(&rec4);
  c4.OnProfileError(absl::UnavailableError("profile refused"));
  EXPECT_THAT(rec4.events, ::testing::ElementsAre("error profile refused"));
}

TEST(RoutingCombinerTest, NoProfileForANonMeshTargetStandsAsAnEmptyOne) {
  Recorder rec;
  RoutingCombiner c(&rec);
  c.SetWatching();
  c.OnPolicyGone(absl::NotFoundError("not a service"));
  EXPECT_THAT(rec.delivered, IsEmpty());  // nothing known yet
  c.OnProfileGone(absl::InvalidArgumentError("not a mesh service"));
  EXPECT_THAT(rec.delivered, ::testing::ElementsAre("-"));
  EXPECT_EQ(rec.errors.back(), "not a mesh service");
}

TEST(RoutingCombinerTest, TheProfilesDirectEndpointGoesWithThePolicy) {
  Recorder rec;
  RoutingCombiner c(&rec);
  c.SetWatching();
  ServiceConfig profile;
  profile.endpoint.emplace();
  profile.endpoint->address = "10.0.0.1:80";
  c.OnProfile(profile);
  c.OnPolicy(Policy("p"));
  ASSERT_TRUE(rec.last.endpoint.has_value());
  EXPECT_EQ(rec.last.endpoint->address, "10.0.0.1:80");
  EXPECT_EQ(rec.last.routes[0].name, "p");
}

}  // namespace
}  // namespace mesh::internal::linkerd
