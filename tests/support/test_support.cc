#include "tests/support/test_support.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "src/base/mutex.h"

namespace mesh::testing {

StaticMesh::StaticMesh() : discovery(StaticDiscovery::Create()) {
  MeshOptions options;
  options.discovery = discovery;
  mesh = *Mesh::Create(options);
}

CountedStaticMesh::CountedStaticMesh()
    : statics(StaticDiscovery::Create()),
      counting(std::make_shared<CountingDiscovery>(statics)) {
  MeshOptions options;
  options.discovery = counting;
  mesh = *Mesh::Create(options);
}

void StaticMesh::Configure(Channel& channel, const std::string& target,
                           const ServiceConfig& config) {
  ASSERT_TRUE(discovery->SetServiceConfig(target, config).ok());
  ASSERT_TRUE(WaitFor([&] { return channel.service_config().has_value(); }));
}

std::vector<std::unique_ptr<tools::EchoBackend>> StartBackends(int n) {
  std::vector<std::unique_ptr<tools::EchoBackend>> out;
  for (int i = 0; i < n; ++i) {
    auto backend = tools::EchoBackend::Start();
    if (!backend.ok()) {
      std::fprintf(stderr, "cannot start backend: %s\n",
                   backend.status().ToString().c_str());
      std::abort();
    }
    out.push_back(*std::move(backend));
  }
  return out;
}

std::map<std::string, std::unique_ptr<tools::EchoBackend>> StartOnOnePort(
    const std::vector<std::string>& hosts, int* port) {
  std::map<std::string, std::unique_ptr<tools::EchoBackend>> out;
  for (int tries = 0; tries < 20 && out.size() < hosts.size(); ++tries) {
    out.clear();
    *port = 0;
    for (const std::string& host : hosts) {
      auto b = tools::EchoBackend::Start(*port, nullptr, host);
      if (!b.ok()) break;
      *port = (*b)->port();
      out[host] = *std::move(b);
    }
  }
  if (out.size() < hosts.size()) out.clear();
  return out;
}

Load::Load(Channel& channel, int total, int concurrency, std::string method)
    : channel_(channel),
      total_(total),
      concurrency_(concurrency),
      method_(std::move(method)) {
  results_.resize(total);
}

void Load::Run(const std::function<void(int)>& between) {
  for (int i = 0; i < total_; ++i) {
    {
      internal::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](Load* l) { return l->in_flight_ < l->concurrency_; }, this));
      ++in_flight_;
    }
    if (between) between(i);
    channel_.CallRawAsync(method_, "x", {}, [this, i](CallResult r) {
      internal::MutexLock lock(&mu_);
      results_[i] = {r.status.code(), r.endpoint};
      --in_flight_;
      ++completed_;
    });
  }
  internal::MutexLock lock(&mu_);
  bool all = mu_.AwaitWithTimeout(
      absl::Condition(
          +[](Load* l) { return l->completed_ == l->total_; }, this),
      absl::Seconds(30));
  EXPECT_TRUE(all) << "calls hung: " << completed_ << " of " << total_;
}

int Load::completed() {
  internal::MutexLock lock(&mu_);
  return completed_;
}

int Load::CountOn(const std::string& endpoint) const {
  int n = 0;
  for (const Outcome& o : results_) n += o.endpoint == endpoint ? 1 : 0;
  return n;
}

int Load::CountOk() const {
  int n = 0;
  for (const Outcome& o : results_) n += o.code == absl::StatusCode::kOk;
  return n;
}

std::vector<Endpoint> EndpointsOf(
    const std::vector<std::unique_ptr<tools::EchoBackend>>& backends) {
  std::vector<Endpoint> out;
  for (const auto& b : backends) {
    Endpoint e;
    e.address = b->address();
    out.push_back(e);
  }
  return out;
}

bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  internal::Notification never;
  while (!condition()) {
    if (absl::Now() >= deadline) return condition();
    never.WaitForNotificationWithTimeout(absl::Milliseconds(1));
  }
  return true;
}

namespace {

class CountedSubscription final : public DiscoverySubscription {
 public:
  CountedSubscription(std::unique_ptr<DiscoverySubscription> inner,
                      std::shared_ptr<std::atomic<int>> live)
      : inner_(std::move(inner)), live_(std::move(live)) {}
  ~CountedSubscription() override {
    inner_.reset();
    live_->fetch_sub(1);
  }

 private:
  std::unique_ptr<DiscoverySubscription> inner_;
  std::shared_ptr<std::atomic<int>> live_;
};

}  // namespace

std::unique_ptr<DiscoverySubscription> CountingDiscovery::Subscribe(
    const std::string& target, EndpointObserver* observer) {
  subscribes_.fetch_add(1);
  live_->fetch_add(1);
  return std::make_unique<CountedSubscription>(
      inner_->Subscribe(target, observer), live_);
}

std::unique_ptr<DiscoverySubscription> CountingDiscovery::SubscribeConfig(
    const std::string& target, ServiceConfigObserver* observer) {
  config_subscribes_.fetch_add(1);
  config_live_->fetch_add(1);
  return std::make_unique<CountedSubscription>(
      inner_->SubscribeConfig(target, observer), config_live_);
}

}  // namespace mesh::testing
