// Listener conversion and the pieces every conversion shares. Routes are in
// xds_convert_route.cc, clusters and endpoints in xds_convert_cluster.cc.
#include "src/discovery/xds/xds_convert.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "envoy/extensions/filters/http/router/v3/router.pb.h"
#include "envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.pb.h"
#include "src/model/http_syntax.h"

namespace mesh::internal::xds {
namespace {

namespace fault_v3 = envoy::extensions::filters::http::fault::v3;
namespace hcm_v3 =
    envoy::extensions::filters::network::http_connection_manager::v3;
using envoy::extensions::filters::http::router::v3::Router;

constexpr int64_t kMaxDurationSeconds = 315'576'000'000;
constexpr int32_t kMaxDurationNanos = 999'999'999;
constexpr uint32_t kMillion = 1'000'000;

absl::Status ConvertFaultAbort(const fault_v3::FaultAbort& abort,
                               FaultInjection* out) {
  switch (abort.error_type_case()) {
    case fault_v3::FaultAbort::kGrpcStatus:
      if (abort.grpc_status() == 0 || abort.grpc_status() > 16) {
        return FieldError("grpc_status",
                          absl::StrCat(abort.grpc_status(),
                                       " is not a gRPC failure code (1..16)"));
      }
      out->abort_code = static_cast<absl::StatusCode>(abort.grpc_status());
      break;
    case fault_v3::FaultAbort::kHttpStatus:
      if (abort.http_status() < 200 || abort.http_status() > 599) {
        return FieldError("http_status", absl::StrCat(abort.http_status(),
                                                      " is outside 200..599"));
      }
      out->abort_code = GrpcCodeOfHttpStatus(abort.http_status());
      break;
    case fault_v3::FaultAbort::kHeaderAbort:
      out->abort_from_header = true;
      break;
    case fault_v3::FaultAbort::ERROR_TYPE_NOT_SET:
      break;  // gRPC: no abort
  }
  if (out->abort_code != absl::StatusCode::kOk) {
    out->abort_message = "fault injected by the xDS fault filter";
  }
  if (abort.has_percentage()) {
    absl::StatusOr<uint32_t> share = ConvertFraction(abort.percentage());
    if (!share.ok()) return Within("percentage", share.status());
    out->abort_per_million = *share;
    out->abort_header_unit = *FractionUnit(abort.percentage());
  }
  return absl::OkStatus();
}

absl::Status ConvertFaultDelay(
    const envoy::extensions::filters::common::fault::v3::FaultDelay& delay,
    FaultInjection* out) {
  if (delay.has_fixed_delay()) {
    absl::StatusOr<absl::Duration> d = ConvertDuration(delay.fixed_delay());
    if (!d.ok()) return Within("fixed_delay", d.status());
    out->delay = *d;
  } else if (delay.has_header_delay()) {
    out->delay_from_header = true;
  }
  if (delay.has_percentage()) {
    absl::StatusOr<uint32_t> share = ConvertFraction(delay.percentage());
    if (!share.ok()) return Within("percentage", share.status());
    out->delay_per_million = *share;
    out->delay_header_unit = *FractionUnit(delay.percentage());
  }
  return absl::OkStatus();
}

// http_filters (gRFC A39): fault filters in order, the router last; an
// optional filter of a type mesh does not know is skipped.
absl::Status ConvertHttpFilters(
    const google::protobuf::RepeatedPtrField<hcm_v3::HttpFilter>& filters,
    ListenerResource* out) {
  if (filters.empty()) {
    return FieldError("http_filters", "empty: the router filter must be last");
  }
  std::set<absl::string_view> names;
  int router = -1;  // index of the router, while it is the last kept filter
  for (int i = 0; i < filters.size(); ++i) {
    const hcm_v3::HttpFilter& filter = filters[i];
    const std::string path = absl::StrCat("http_filters[", i, "]");
    if (filter.name().empty()) return FieldError(path + ".name", "empty");
    if (!names.insert(filter.name()).second) {
      return FieldError(path + ".name", absl::StrCat("duplicate filter name '",
                                                     filter.name(), "'"));
    }
    if (!filter.has_typed_config()) {
      if (filter.is_optional()) continue;
      return FieldError(path + ".typed_config",
                        "missing (and the filter is not optional)");
    }
    const google::protobuf::Any& config = filter.typed_config();
    const bool is_router = config.Is<Router>();
    const bool is_fault = config.Is<fault_v3::HTTPFault>();
    if (!is_router && !is_fault) {
      if (filter.is_optional()) continue;
      return FieldError(
          path + ".typed_config",
          absl::StrCat("unsupported filter type ", TypeNameOf(config)));
    }
    if (router >= 0) {
      return FieldError(absl::StrCat("http_filters[", router, "]"),
                        "the router filter must be the last filter");
    }
    if (is_router) {
      router = i;
      continue;
    }
    fault_v3::HTTPFault fault;
    if (!config.UnpackTo(&fault)) {
      return FieldError(path + ".typed_config",
                        "does not parse as an HTTPFault");
    }
    absl::StatusOr<FaultInjection> injection = ConvertHttpFault(fault);
    if (!injection.ok()) {
      return Within(path + ".typed_config", injection.status());
    }
    out->fault_filters.push_back({filter.name(), *std::move(injection)});
  }
  if (router < 0) {
    return FieldError("http_filters",
                      "the last filter must be the router "
                      "(envoy.extensions.filters.http.router.v3.Router)");
  }
  return absl::OkStatus();
}

absl::Status ConvertHttpConnectionManager(
    const hcm_v3::HttpConnectionManager& hcm, ListenerResource* out) {
  switch (hcm.route_specifier_case()) {
    case hcm_v3::HttpConnectionManager::kRds: {
      const hcm_v3::Rds& rds = hcm.rds();
      if (!rds.has_config_source()) {
        return FieldError("rds.config_source", "missing");
      }
      if (!rds.config_source().has_ads() && !rds.config_source().has_self()) {
        return FieldError("rds.config_source",
                          "must be ads or self: mesh asks for routes on its "
                          "ADS stream only");
      }
      if (rds.route_config_name().empty()) {
        return FieldError("rds.route_config_name", "empty");
      }
      out->route_config_name = rds.route_config_name();
      break;
    }
    case hcm_v3::HttpConnectionManager::kRouteConfig: {
      absl::StatusOr<RouteConfigResource> routes =
          ConvertRouteConfiguration(hcm.route_config());
      if (!routes.ok()) return Within("route_config", routes.status());
      out->inline_route_config = *std::move(routes);
      break;
    }
    case hcm_v3::HttpConnectionManager::ROUTE_SPECIFIER_NOT_SET:
      return FieldError("route_specifier",
                        "neither rds nor an inline route_config (scoped "
                        "routes are not supported)");
  }
  if (hcm.common_http_protocol_options().has_max_stream_duration()) {
    absl::StatusOr<absl::Duration> d = ConvertDuration(
        hcm.common_http_protocol_options().max_stream_duration());
    if (!d.ok()) {
      return Within("common_http_protocol_options.max_stream_duration",
                    d.status());
    }
    if (*d > absl::ZeroDuration()) out->max_stream_duration = *d;
  }
  return ConvertHttpFilters(hcm.http_filters(), out);
}

}  // namespace

absl::Status FieldError(absl::string_view path, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", problem));
}

absl::Status Within(absl::string_view field, const absl::Status& status) {
  if (status.ok()) return status;
  const absl::string_view message = status.message();
  const absl::string_view separator =
      !message.empty() && message.front() == '[' ? "" : ".";
  return absl::Status(status.code(), absl::StrCat(field, separator, message));
}

absl::string_view TypeNameOf(const google::protobuf::Any& any) {
  absl::string_view url = any.type_url();
  const size_t slash = url.rfind('/');
  return slash == absl::string_view::npos ? url : url.substr(slash + 1);
}

absl::StatusOr<absl::Duration> ConvertDuration(
    const google::protobuf::Duration& duration) {
  if (duration.seconds() < 0 || duration.seconds() > kMaxDurationSeconds) {
    return FieldError("seconds",
                      absl::StrCat(duration.seconds(), " is outside [0, ",
                                   kMaxDurationSeconds, "]"));
  }
  if (duration.nanos() < 0 || duration.nanos() > kMaxDurationNanos) {
    return FieldError("nanos",
                      absl::StrCat(duration.nanos(), " is outside [0, ",
                                   kMaxDurationNanos, "]"));
  }
  return absl::Seconds(duration.seconds()) +
         absl::Nanoseconds(duration.nanos());
}

absl::StatusOr<uint32_t> FractionUnit(
    const envoy::type::v3::FractionalPercent& fraction) {
  switch (fraction.denominator()) {
    case envoy::type::v3::FractionalPercent::HUNDRED:
      return 10'000;
    case envoy::type::v3::FractionalPercent::TEN_THOUSAND:
      return 100;
    case envoy::type::v3::FractionalPercent::MILLION:
      return 1;
    default:
      return FieldError("denominator",
                        absl::StrCat("unknown value ",
                                     static_cast<int>(fraction.denominator())));
  }
}

absl::StatusOr<uint32_t> ConvertFraction(
    const envoy::type::v3::FractionalPercent& fraction) {
  absl::StatusOr<uint32_t> unit = FractionUnit(fraction);
  if (!unit.ok()) return unit.status();
  const uint64_t scale = *unit;
  return static_cast<uint32_t>(
      std::min<uint64_t>(uint64_t{fraction.numerator()} * scale, kMillion));
}

absl::StatusOr<FaultInjection> ConvertHttpFault(
    const fault_v3::HTTPFault& fault) {
  // gRPC ignores these restrictions (gRFC A33 defers them) and so would
  // inject faults into every call; mesh refuses them instead.
  if (!fault.headers().empty()) {
    return FieldError("headers",
                      "fault filter header matching is not supported yet");
  }
  if (!fault.upstream_cluster().empty()) {
    return FieldError("upstream_cluster",
                      "faults for one upstream cluster are not supported yet");
  }
  if (!fault.downstream_nodes().empty()) {
    return FieldError("downstream_nodes",
                      "faults for some downstream nodes are not supported");
  }
  FaultInjection out;
  if (fault.has_delay()) {
    absl::Status s = ConvertFaultDelay(fault.delay(), &out);
    if (!s.ok()) return Within("delay", s);
  }
  if (fault.has_abort()) {
    absl::Status s = ConvertFaultAbort(fault.abort(), &out);
    if (!s.ok()) return Within("abort", s);
  }
  if (fault.has_max_active_faults()) {
    // Envoy and gRPC let no fault become active with a limit of 0; mesh's
    // 0 means no limit, so the same is said with no fault at all.
    if (fault.max_active_faults().value() == 0) return FaultInjection();
    out.max_active_faults = fault.max_active_faults().value();
  }
  return out;
}

absl::StatusOr<ListenerResource> ConvertListener(
    const envoy::config::listener::v3::Listener& listener) {
  ListenerResource out;
  out.name = listener.name();
  if (!listener.api_listener().has_api_listener()) {
    return FieldError("api_listener.api_listener",
                      "missing: a client reads a Listener's API listener");
  }
  const google::protobuf::Any& api = listener.api_listener().api_listener();
  hcm_v3::HttpConnectionManager hcm;
  if (!api.Is<hcm_v3::HttpConnectionManager>()) {
    return FieldError("api_listener.api_listener",
                      absl::StrCat("holds a ", TypeNameOf(api),
                                   ", not an HttpConnectionManager"));
  }
  if (!api.UnpackTo(&hcm)) {
    return FieldError("api_listener.api_listener",
                      "does not parse as an HttpConnectionManager");
  }
  absl::Status s = ConvertHttpConnectionManager(hcm, &out);
  if (!s.ok()) return Within("api_listener.api_listener", s);
  return out;
}

}  // namespace mesh::internal::xds
