// What a Mesh does with the built-in sources it is given
// (internal::BuiltinSource): each gets the Mesh's timer thread, one per
// Mesh. (An application's own source, which has none of the built-in
// parts, is refused an authority in DnsTargetTest.)
#include "src/discovery/common/builtin_source.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "src/base/mutex.h"

namespace mesh {
namespace {

// A built-in source in form only: serves what a StaticDiscovery holds and
// records the timer threads lent to it.
class LendRecordingSource final : public internal::BuiltinSource {
 public:
  std::string KindName() const override { return "test"; }
  explicit LendRecordingSource(std::shared_ptr<StaticDiscovery> endpoints,
                               std::string scheme = "")
      : endpoints_(std::move(endpoints)), scheme_(std::move(scheme)) {}

  std::unique_ptr<DiscoverySubscription> Subscribe(
      const std::string& target, EndpointObserver* observer) override {
    return endpoints_->Subscribe(target, observer);
  }
  std::string Scheme() const override { return scheme_; }
  void LendTimers(
      const std::shared_ptr<internal::TimerThread>& timers) override {
    internal::MutexLock lock(&mu_);
    lent_.push_back(timers);
  }
  std::vector<std::shared_ptr<internal::TimerThread>> lent() {
    internal::MutexLock lock(&mu_);
    return lent_;
  }

 private:
  const std::shared_ptr<StaticDiscovery> endpoints_;
  const std::string scheme_;
  internal::Mutex mu_;
  std::vector<std::shared_ptr<internal::TimerThread>> lent_
      ABSL_GUARDED_BY(mu_);
};

TEST(BuiltinSourceTest, AMeshLendsOneTimerThreadToEachOfItsBuiltinSources) {
  auto endpoints = StaticDiscovery::Create();
  auto plain = std::make_shared<LendRecordingSource>(endpoints);
  auto schemed = std::make_shared<LendRecordingSource>(endpoints, "x");
  MeshOptions options;
  options.discovery = plain;
  options.discovery_by_scheme["x"] = schemed;
  auto first = Mesh::Create(options);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(plain->lent().size(), 1u);
  ASSERT_EQ(schemed->lent().size(), 1u);
  ASSERT_NE(plain->lent()[0], nullptr);
  EXPECT_EQ(plain->lent()[0], schemed->lent()[0]);

  // Another Mesh lends its own (the sources keep the first, as theirs say).
  auto second = Mesh::Create(options);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(plain->lent().size(), 2u);
  EXPECT_NE(plain->lent()[1], plain->lent()[0]);
  EXPECT_EQ(schemed->lent()[1], plain->lent()[1]);
}

}  // namespace
}  // namespace mesh
