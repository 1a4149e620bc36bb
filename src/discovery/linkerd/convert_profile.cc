// Destination.GetProfile profiles → ServiceConfig. See convert.h.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "src/discovery/linkerd/convert.h"
#include "src/discovery/linkerd/convert_match.h"
#include "src/model/address.h"

namespace mesh::internal::linkerd {
namespace {

namespace dst = ::io::linkerd::proxy::destination;

}  // namespace

absl::StatusOr<absl::Duration> ConvertDuration(
    const google::protobuf::Duration& d) {
  constexpr int64_t kMaxSeconds = 315'576'000'000;
  constexpr int32_t kMaxNanos = 999'999'999;
  if (d.seconds() < -kMaxSeconds || d.seconds() > kMaxSeconds ||
      d.nanos() < -kMaxNanos || d.nanos() > kMaxNanos ||
      (d.seconds() > 0 && d.nanos() < 0) ||
      (d.seconds() < 0 && d.nanos() > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("{seconds: ", d.seconds(), ", nanos: ", d.nanos(),
                     "} is not a valid Duration"));
  }
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

namespace {

// "route #2 ('books-get')", or "route #2" without a `route` label.
std::string RouteName(int index, const dst::Route& route) {
  auto it = route.metrics_labels().find("route");
  if (it == route.metrics_labels().end()) return absl::StrCat("route #", index);
  return absl::StrCat("route #", index, " ('", absl::CEscape(it->second), "')");
}

std::optional<Route> ConvertRoute(int index, const dst::Route& wire,
                                  std::vector<std::string>* dropped) {
  const std::string name = RouteName(index, wire);
  auto drop = [&](absl::string_view reason) {
    dropped->push_back(absl::StrCat(name, " dropped: ", reason));
    return std::nullopt;
  };
  if (!wire.has_condition()) return drop("it has no condition");
  absl::StatusOr<RequestMatch> condition =
      ConvertRequestMatch(wire.condition());
  if (!condition.ok()) return drop(condition.status().message());

  Route route;
  route.condition = *std::move(condition);
  if (wire.has_timeout()) {
    absl::StatusOr<absl::Duration> timeout = ConvertDuration(wire.timeout());
    if (!timeout.ok()) {
      return drop(absl::StrCat("timeout ", timeout.status().message()));
    }
    if (*timeout < absl::ZeroDuration()) {
      return drop(absl::StrCat("timeout ", absl::FormatDuration(*timeout),
                               " is negative"));
    }
    // A zero bound would fail every call, so zero means none.
    if (*timeout > absl::ZeroDuration()) route.timeout = *timeout;
  }
  route.metrics_labels.insert(wire.metrics_labels().begin(),
                              wire.metrics_labels().end());
  auto label = route.metrics_labels.find("route");
  if (label != route.metrics_labels.end()) route.name = label->second;
  route.is_retryable = wire.is_retryable();

  for (int j = 0; j < wire.response_classes_size(); ++j) {
    const dst::ResponseClass& wire_class = wire.response_classes(j);
    absl::StatusOr<ResponseMatch> match =
        wire_class.has_condition()
            ? ConvertResponseMatch(wire_class.condition())
            : absl::InvalidArgumentError("it has no condition");
    if (!match.ok()) {
      dropped->push_back(absl::StrCat(name, ": response class #", j,
                                      " dropped: ", match.status().message()));
      continue;
    }
    ResponseClass response_class;
    response_class.condition = *std::move(match);
    response_class.is_failure = wire_class.is_failure();
    route.response_classes.push_back(std::move(response_class));
  }
  return route;
}

std::optional<RetryBudget> ConvertRetryBudget(
    const dst::RetryBudget& wire, std::vector<std::string>* dropped) {
  // Without a budget the destination uses the default one: say which.
  auto drop = [&](absl::string_view reason) {
    const RetryBudget fallback;
    dropped->push_back(
        absl::StrCat("retry budget dropped, the default applies (retry_ratio ",
                     fallback.retry_ratio, ", min_retries_per_second ",
                     fallback.min_retries_per_second, ", ttl ",
                     absl::FormatDuration(fallback.ttl), "): ", reason));
    return std::nullopt;
  };
  // Written so that NaN fails too.
  if (!(wire.retry_ratio() >= 0 && wire.retry_ratio() <= 1000)) {
    return drop(absl::StrCat("retry_ratio ", wire.retry_ratio(),
                             " is outside [0, 1000]"));
  }
  // linkerd2-proxy's limit too (it rejects values above i32::MAX).
  if (wire.min_retries_per_second() > 2147483647u) {
    return drop(absl::StrCat("min_retries_per_second ",
                             wire.min_retries_per_second(),
                             " is above 2147483647"));
  }
  if (!wire.has_ttl()) return drop("ttl is missing");
  absl::StatusOr<absl::Duration> ttl = ConvertDuration(wire.ttl());
  if (!ttl.ok()) return drop(absl::StrCat("ttl ", ttl.status().message()));
  if (*ttl < absl::Seconds(1) || *ttl > absl::Seconds(60)) {
    return drop(absl::StrCat("ttl ", absl::FormatDuration(*ttl),
                             " is outside [1s, 60s]"));
  }
  RetryBudget budget;
  budget.retry_ratio = wire.retry_ratio();
  budget.min_retries_per_second = wire.min_retries_per_second();
  budget.ttl = *ttl;
  return budget;
}

}  // namespace

ProfileConversion ConvertProfile(const dst::DestinationProfile& profile) {
  ProfileConversion out;
  ServiceConfig& config = out.config;
  for (int i = 0; i < profile.routes_size(); ++i) {
    std::optional<Route> route =
        ConvertRoute(i, profile.routes(i), &out.dropped);
    if (route.has_value()) config.routes.push_back(*std::move(route));
  }
  if (profile.has_retry_budget()) {
    config.retry_budget =
        ConvertRetryBudget(profile.retry_budget(), &out.dropped);
  }
  for (int k = 0; k < profile.dst_overrides_size(); ++k) {
    const dst::WeightedDst& wire = profile.dst_overrides(k);
    std::string reason;
    if (wire.weight() == 0) {
      reason = "weight 0";
    } else if (absl::Status s = ValidateDestination(wire.authority());
               !s.ok()) {
      reason = std::string(s.message());
    }
    if (!reason.empty()) {
      out.dropped.push_back(absl::StrCat("traffic split backend #", k, " ('",
                                         absl::CEscape(wire.authority()),
                                         "') dropped: ", reason));
      continue;
    }
    config.backends.push_back(WeightedBackend{wire.authority(), wire.weight()});
  }
  config.fully_qualified_name = profile.fully_qualified_name();
  config.opaque_protocol = profile.opaque_protocol();
  if (profile.has_endpoint()) {
    absl::StatusOr<Endpoint> endpoint = ConvertWeightedAddr(
        profile.endpoint(), google::protobuf::Map<std::string, std::string>());
    if (endpoint.ok()) {
      config.endpoint = *std::move(endpoint);
    } else {
      out.dropped.push_back(
          absl::StrCat("endpoint dropped (calls are balanced): ",
                       endpoint.status().message()));
    }
  }
  return out;
}

}  // namespace mesh::internal::linkerd
