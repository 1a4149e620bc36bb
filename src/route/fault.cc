#include "src/route/fault.h"

#include <algorithm>
#include <cstdint>

#include "absl/random/distributions.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace mesh::internal {
namespace {

constexpr uint32_t kMillion = 1'000'000;

const std::string* Find(
    const std::vector<std::pair<std::string, std::string>>* headers,
    absl::string_view name) {
  if (headers == nullptr) return nullptr;
  for (const auto& [key, value] : *headers) {
    if (key == name) return &value;
  }
  return nullptr;
}

bool Draw(uint32_t per_million, absl::BitGenRef gen) {
  if (per_million == 0) return false;
  if (per_million >= kMillion) return true;
  return absl::Uniform<uint32_t>(gen, 0, kMillion) < per_million;
}

// The share a header asks for (a count of `unit` millionths), capped by
// `configured`; without the header, the configured share.
uint32_t HeaderShare(
    const std::vector<std::pair<std::string, std::string>>* headers,
    absl::string_view name, uint32_t configured, uint32_t unit) {
  const std::string* value = Find(headers, name);
  uint32_t count = 0;
  if (value == nullptr || !absl::SimpleAtoi(*value, &count)) {
    return configured;
  }
  const uint64_t asked = uint64_t{count} * std::max<uint32_t>(unit, 1);
  return static_cast<uint32_t>(std::min<uint64_t>(configured, asked));
}

}  // namespace

FaultDraw DrawFault(
    const FaultInjection& fault,
    const std::vector<std::pair<std::string, std::string>>* headers,
    absl::BitGenRef gen) {
  FaultDraw draw;
  if (fault.delay_from_header) {
    const std::string* ms = Find(headers, "x-envoy-fault-delay-request");
    int64_t millis = 0;
    if (ms != nullptr && absl::SimpleAtoi(*ms, &millis) && millis > 0 &&
        Draw(HeaderShare(headers, "x-envoy-fault-delay-request-percentage",
                         fault.delay_per_million, fault.delay_header_unit),
             gen)) {
      draw.delay = absl::Milliseconds(millis);
    }
  } else if (Draw(fault.delay_per_million, gen)) {
    draw.delay = fault.delay;
  }
  if (fault.abort_from_header) {
    const std::string* code = Find(headers, "x-envoy-fault-abort-grpc-request");
    int value = 0;
    if (code != nullptr && absl::SimpleAtoi(*code, &value) && value > 0 &&
        value <= 16 &&
        Draw(HeaderShare(headers, "x-envoy-fault-abort-request-percentage",
                         fault.abort_per_million, fault.abort_header_unit),
             gen)) {
      draw.abort = absl::Status(
          static_cast<absl::StatusCode>(value),
          absl::StrCat("fault injected: code ", value,
                       " asked for by x-envoy-fault-abort-grpc-request"));
    }
  } else if (fault.abort_code != absl::StatusCode::kOk &&
             Draw(fault.abort_per_million, gen)) {
    draw.abort = absl::Status(fault.abort_code,
                              fault.abort_message.empty()
                                  ? "fault injected by the route's config"
                                  : fault.abort_message);
  }
  return draw;
}

}  // namespace mesh::internal
