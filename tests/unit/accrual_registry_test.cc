// AccrualRegistry: which ejection a Linkerd target's endpoint observers get
// from the failure accrual of the policies routing to it — at registration,
// at each change, cleared by the parent that set it only, never after the
// registration ends — and that it keeps no entry for an unused target.
#include "src/discovery/linkerd/accrual_registry.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace mesh::internal::linkerd {
namespace {

// Records the ejection thresholds it is told, 0 for "none".
class Recorder final : public EndpointObserver {
 public:
  void OnBackendPolicy(const BackendPolicy& policy) override {
    told.push_back(policy.ejection ? policy.ejection->consecutive_failures : 0);
  }
  void OnEndpointUpdate(const EndpointUpdate&) override {}
  std::vector<uint32_t> told;
};

BackendPolicy::Ejection Accrual(uint32_t failures) {
  BackendPolicy::Ejection e;
  e.consecutive_failures = failures;
  e.interval_rules = false;
  return e;
}

TEST(AccrualRegistryTest, ObserversGetTheParentsAccrualNowAndOnChange) {
  AccrualRegistry registry;
  Recorder early, late, other;
  auto r1 = registry.Register("books:80", &early);
  auto r2 = registry.Register("shelves:80", &other);
  registry.SetFromParent("web:80", {"books:80"}, Accrual(3));
  EXPECT_EQ(early.told, std::vector<uint32_t>({3}));
  EXPECT_TRUE(other.told.empty());                 // not a backend of web's
  auto r3 = registry.Register("books:80", &late);  // gets it at once
  EXPECT_EQ(late.told, std::vector<uint32_t>({3}));
  registry.SetFromParent("web:80", {"books:80"}, Accrual(7));
  EXPECT_EQ(early.told, std::vector<uint32_t>({3, 7}));
  // The policy moves its routes to shelves: books is cleared.
  registry.SetFromParent("web:80", {"shelves:80"}, Accrual(7));
  EXPECT_EQ(early.told, std::vector<uint32_t>({3, 7, 0}));
  EXPECT_EQ(other.told, std::vector<uint32_t>({7}));
  // Its accrual is turned off, then the policy goes.
  registry.SetFromParent("web:80", {"shelves:80"}, std::nullopt);
  EXPECT_EQ(other.told, std::vector<uint32_t>({7, 0}));
  registry.ClearParent("web:80");
  EXPECT_EQ(other.told.size(), 2u);
}

TEST(AccrualRegistryTest, AParentClearsOnlyWhatItSet) {
  AccrualRegistry registry;
  Recorder books;
  auto r = registry.Register("books:80", &books);
  registry.SetFromParent("web:80", {"books:80"}, Accrual(3));
  registry.SetFromParent("api:80", {"books:80"}, Accrual(5));  // last wins
  registry.ClearParent("web:80");  // no longer books's setter
  EXPECT_EQ(books.told, std::vector<uint32_t>({3, 5}));
  registry.ClearParent("api:80");
  EXPECT_EQ(books.told, std::vector<uint32_t>({3, 5, 0}));
}

TEST(AccrualRegistryTest, AnEndedRegistrationHearsNothingAndLeavesNoEntry) {
  AccrualRegistry registry;
  Recorder books;
  auto r = registry.Register("books:80", &books);
  EXPECT_EQ(registry.EntriesForTest(), 1u);
  r.reset();
  EXPECT_EQ(registry.EntriesForTest(), 0u);
  registry.SetFromParent("web:80", {"books:80"}, Accrual(3));
  EXPECT_TRUE(books.told.empty());
  // The ejection is kept for a destination that comes later; cleared, the
  // entry goes.
  EXPECT_EQ(registry.EntriesForTest(), 1u);
  registry.ClearParent("web:80");
  EXPECT_EQ(registry.EntriesForTest(), 0u);
}

}  // namespace
}  // namespace mesh::internal::linkerd
