// EndpointSet applies the update vocabulary to one destination's endpoints.
//
// Applying is all-or-nothing: an update with any invalid endpoint (or an
// address twice) is rejected whole and the set is unchanged. Applying the same
// update twice gives the same set.
//
//   EndpointSet set;
//   absl::Status s = set.Apply(EndpointUpdate::Add({e1, e2}));
//   std::vector<Endpoint> now = set.Endpoints();  // sorted by address
//
// Storage: one immutable, shared copy of each endpoint (an `Entry`, held by
// shared_ptr), in a vector sorted by address that is itself immutable and
// shared: each Apply that changes the set makes a new list, and an endpoint
// that an update leaves unchanged keeps its entry (the same object), so the
// holders of the list or of an entry (a balancer, a metrics index) share it
// instead of copying the endpoint; an update that changes nothing keeps the
// list itself. BasicEndpointSet<Entry> lets a holder keep
// per-endpoint state of its own in the entry (the destination's lazily made
// metrics); `Entry` needs `explicit Entry(const Endpoint&)` and a member
// `const Endpoint endpoint`.
//
// Thread-compatible; the lists and entries it hands out are immutable (but
// for an Entry's own mutable members) and safe to share across threads.
#ifndef MESH_SRC_MODEL_ENDPOINT_SET_H_
#define MESH_SRC_MODEL_ENDPOINT_SET_H_

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mesh/endpoint.h"

namespace mesh::internal {

// OK, or INVALID_ARGUMENT naming the first invalid endpoint or, if all are
// valid, the lowest address that appears twice.
absl::Status ValidateEndpointList(const std::vector<Endpoint>& endpoints);

// `endpoints`, as pointers, sorted by address (equal addresses side by side).
std::vector<const Endpoint*> SortedByAddress(
    const std::vector<Endpoint>& endpoints);

// `endpoints` validated as ValidateEndpointList does and sorted by address
// (an address that appears twice is found beside itself in the sorted order:
// no set of the addresses is built).
absl::StatusOr<std::vector<const Endpoint*>> ValidatedAndSortedByAddress(
    const std::vector<Endpoint>& endpoints);

// The plain entry: the endpoint and nothing else.
struct PlainEndpointEntry {
  explicit PlainEndpointEntry(const Endpoint& e) : endpoint(e) {}
  const Endpoint endpoint;
};

template <typename Entry>
class BasicEndpointSet {
 public:
  using EntryPtr = std::shared_ptr<const Entry>;
  using List = std::vector<EntryPtr>;

  // OK, or INVALID_ARGUMENT naming the first bad endpoint (nothing applied).
  absl::Status Apply(const EndpointUpdate& update);

  // The current entries, sorted by address; never null. Immutable: a later
  // Apply makes a new list and leaves this one as it is.
  const std::shared_ptr<const List>& entries() const { return entries_; }
  // The current endpoints (copies), sorted by address.
  std::vector<Endpoint> Endpoints() const;
  size_t size() const { return entries_->size(); }
  // False after NoEndpoints{exists=false}, true after anything else.
  bool exists() const { return exists_; }
  // True once any update has been applied.
  bool has_update() const { return has_update_; }

 private:
  static bool Less(const EntryPtr& a, absl::string_view address) {
    return a->endpoint.address < address;
  }
  // The entry for `e`: `old` itself if it holds an equal endpoint.
  static EntryPtr Intern(const Endpoint& e, const EntryPtr* old) {
    if (old != nullptr && (*old)->endpoint == e) return *old;
    return std::make_shared<const Entry>(e);
  }
  // The entries of `sorted` (sorted by address) merged into the current
  // ones: an address in both takes the new endpoint. With `replace`, the
  // current entries that `sorted` does not name are dropped.
  std::shared_ptr<const List> Merge(const std::vector<const Endpoint*>& sorted,
                                    bool replace) const;

  std::shared_ptr<const List> entries_ = std::make_shared<const List>();
  bool exists_ = true;
  bool has_update_ = false;
};

using EndpointSet = BasicEndpointSet<PlainEndpointEntry>;

template <typename Entry>
std::shared_ptr<const typename BasicEndpointSet<Entry>::List>
BasicEndpointSet<Entry>::Merge(const std::vector<const Endpoint*>& sorted,
                               bool replace) const {
  const List& old = *entries_;
  auto next = std::make_shared<List>();
  next->reserve(replace ? sorted.size() : old.size() + sorted.size());
  auto o = old.begin();
  for (const Endpoint* e : sorted) {
    for (; o != old.end() && Less(*o, e->address); ++o) {
      if (!replace) next->push_back(*o);
    }
    const bool same = o != old.end() && (*o)->endpoint.address == e->address;
    next->push_back(Intern(*e, same ? &*o : nullptr));
    if (same) ++o;
  }
  if (!replace) next->insert(next->end(), o, old.end());
  // An update that changes nothing keeps the current list, so that holders
  // can tell by comparing pointers.
  if (next->size() == old.size() &&
      std::equal(next->begin(), next->end(), old.begin())) {
    return entries_;
  }
  return next;
}

template <typename Entry>
absl::Status BasicEndpointSet<Entry>::Apply(const EndpointUpdate& update) {
  switch (update.kind) {
    case EndpointUpdate::Kind::kReset:
    case EndpointUpdate::Kind::kAdd: {
      absl::StatusOr<std::vector<const Endpoint*>> sorted =
          ValidatedAndSortedByAddress(update.endpoints);
      if (!sorted.ok()) return sorted.status();
      entries_ = Merge(*sorted, update.kind == EndpointUpdate::Kind::kReset);
      exists_ = true;
      break;
    }
    case EndpointUpdate::Kind::kRemove: {
      absl::flat_hash_set<absl::string_view> gone(update.addresses.begin(),
                                                  update.addresses.end());
      const List& old = *entries_;
      size_t kept = 0;
      for (const EntryPtr& e : old) kept += !gone.contains(e->endpoint.address);
      if (kept == old.size()) break;
      auto next = std::make_shared<List>();
      next->reserve(kept);
      for (const EntryPtr& e : old) {
        if (!gone.contains(e->endpoint.address)) next->push_back(e);
      }
      entries_ = std::move(next);
      break;
    }
    case EndpointUpdate::Kind::kNoEndpoints:
      if (!entries_->empty()) entries_ = std::make_shared<const List>();
      exists_ = update.exists;
      break;
  }
  has_update_ = true;
  return absl::OkStatus();
}

template <typename Entry>
std::vector<Endpoint> BasicEndpointSet<Entry>::Endpoints() const {
  std::vector<Endpoint> out;
  out.reserve(entries_->size());
  for (const EntryPtr& e : *entries_) out.push_back(e->endpoint);
  return out;
}

}  // namespace mesh::internal

#endif  // MESH_SRC_MODEL_ENDPOINT_SET_H_
