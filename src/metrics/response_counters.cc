#include "src/metrics/response_counters.h"

namespace mesh::internal {

int ResponseCounters::CellOf(bool failure, int grpc_code) {
  int code_slot = (grpc_code >= 0 && grpc_code <= kMaxGrpcCode)
                      ? grpc_code
                      : kMaxGrpcCode + 1;
  return (failure ? kCellsPerClass : 0) + code_slot;
}

void ResponseCounters::Record(bool failure, int grpc_code) {
  cells_[CellOf(failure, grpc_code)].fetch_add(1, std::memory_order_relaxed);
}

uint64_t ResponseCounters::Count(bool failure, int grpc_code) const {
  return cells_[CellOf(failure, grpc_code)].load(std::memory_order_relaxed);
}

void ResponseCounters::ForEachNonZero(
    absl::FunctionRef<void(bool failure, int grpc_code, uint64_t count)> fn)
    const {
  for (bool failure : {true, false}) {
    for (int slot = 0; slot < kCellsPerClass; ++slot) {
      uint64_t count = cells_[(failure ? kCellsPerClass : 0) + slot].load(
          std::memory_order_relaxed);
      if (count == 0) continue;
      fn(failure, slot > kMaxGrpcCode ? kOtherGrpcCode : slot, count);
    }
  }
}

}  // namespace mesh::internal
