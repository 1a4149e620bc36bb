// ResponseCounters: responses counted by classification (success or
// failure) × gRPC status code, the cells behind route_response_total and
// endpoint_response_total.
//
// Codes 0..16 (OK … UNAUTHENTICATED) have a cell each; any other number
// shares one "other" cell per classification, read back as kOtherGrpcCode
// and rendered as grpc_status="".
//
//   ResponseCounters responses;
//   responses.Record(/*failure=*/true, 14);  // UNAVAILABLE
//   responses.ForEachNonZero([](bool failure, int code, uint64_t n) {...});
//
// Thread-safe; Record is wait-free (one relaxed increment).
#ifndef MESH_SRC_METRICS_RESPONSE_COUNTERS_H_
#define MESH_SRC_METRICS_RESPONSE_COUNTERS_H_

#include <array>
#include <atomic>
#include <cstdint>

#include "absl/functional/function_ref.h"

namespace mesh::internal {

// The code reported for the cell of status codes outside 0..16.
inline constexpr int kOtherGrpcCode = -1;

class ResponseCounters {
 public:
  void Record(bool failure, int grpc_code);

  // The count of one cell; a code outside 0..16 reads the "other" cell.
  uint64_t Count(bool failure, int grpc_code) const;

  // Calls `fn` for every cell with a non-zero count: failures before
  // successes (the sorted order of the rendered classification), codes
  // ascending, the "other" cell (kOtherGrpcCode) last.
  void ForEachNonZero(
      absl::FunctionRef<void(bool failure, int grpc_code, uint64_t count)> fn)
      const;

 private:
  static constexpr int kMaxGrpcCode = 16;
  static constexpr int kCellsPerClass = kMaxGrpcCode + 2;  // + "other"

  static int CellOf(bool failure, int grpc_code);

  std::array<std::atomic<uint64_t>, 2 * kCellsPerClass> cells_ = {};
};

// Plain HTTP answers (mesh::curl) counted by classification × status class:
// 1xx … 5xx, and "other" for a status outside 100..599 — the cells behind
// route_http_response_total.
//
// Thread-safe; Record is wait-free.
class HttpStatusCounters {
 public:
  void Record(bool failure, int http_status) {
    const int cls = http_status >= 100 && http_status <= 599
                        ? http_status / 100 - 1
                        : kClasses - 1;
    cells_[(failure ? kClasses : 0) + cls].fetch_add(1,
                                                     std::memory_order_relaxed);
  }
  // Calls `fn` for every non-zero cell, failures first, classes ascending:
  // `status_class` is "1xx" … "5xx" or "other".
  void ForEachNonZero(
      absl::FunctionRef<void(bool failure, const char* status_class,
                             uint64_t count)>
          fn) const {
    static constexpr const char* kNames[kClasses] = {"1xx", "2xx", "3xx",
                                                     "4xx", "5xx", "other"};
    for (bool failure : {true, false}) {
      for (int c = 0; c < kClasses; ++c) {
        const uint64_t n = cells_[(failure ? kClasses : 0) + c].load(
            std::memory_order_relaxed);
        if (n != 0) fn(failure, kNames[c], n);
      }
    }
  }

 private:
  static constexpr int kClasses = 6;
  std::array<std::atomic<uint64_t>, 2 * kClasses> cells_ = {};
};

}  // namespace mesh::internal

#endif  // MESH_SRC_METRICS_RESPONSE_COUNTERS_H_
