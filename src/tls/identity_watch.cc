#include "src/tls/identity_watch.h"

#include <algorithm>
#include <filesystem>
#include <utility>

namespace mesh::internal {
namespace {

// The directories holding `options`' files, each once.
std::vector<std::string> DirectoriesOf(const IdentityOptions& options) {
  std::vector<std::string> dirs;
  for (const std::string* file :
       {&options.cert_chain_file, &options.private_key_file,
        &options.trust_roots_file}) {
    if (file->empty()) continue;
    std::string dir = std::filesystem::path(*file).parent_path().string();
    if (dir.empty()) dir = ".";
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) {
      dirs.push_back(std::move(dir));
    }
  }
  return dirs;
}

bool Contains(const std::vector<int>& ids, int id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

IdentityWatch::~IdentityWatch() = default;

absl::Status IdentityWatch::Add(const std::shared_ptr<IdentityStore>& store) {
  MutexLock lock(&mu_);
  if (events_ == nullptr && unavailable_.ok()) {
    absl::StatusOr<std::unique_ptr<DirectoryEvents>> made =
        DirectoryEvents::Create();
    if (made.ok()) {
      events_ = *std::move(made);
    } else {
      unavailable_ = made.status();
    }
  }
  if (events_ == nullptr) return unavailable_;
  Entry entry;
  entry.store = store;
  for (const std::string& dir : DirectoriesOf(store->options())) {
    absl::StatusOr<int> id = events_->Watch(dir);
    if (!id.ok()) {
      UnwatchUnused(entry.watches);
      return id.status();
    }
    entry.watches.push_back(*id);
  }
  entries_.push_back(std::move(entry));
  return absl::OkStatus();
}

void IdentityWatch::UnwatchUnused(const std::vector<int>& ids) {
  for (int id : ids) {
    bool used =
        std::any_of(entries_.begin(), entries_.end(),
                    [id](const Entry& e) { return Contains(e.watches, id); });
    if (!used) events_->Unwatch(id);
  }
}

void IdentityWatch::Tick() {
  std::vector<std::shared_ptr<IdentityStore>> due;
  {
    MutexLock lock(&mu_);
    if (events_ == nullptr) return;
    bool overflowed = false;
    const std::vector<int> changed = events_->Drain(&overflowed);
    std::vector<int> released;
    for (auto it = entries_.begin(); it != entries_.end();) {
      std::shared_ptr<IdentityStore> store = it->store.lock();
      if (store == nullptr) {
        released.insert(released.end(), it->watches.begin(), it->watches.end());
        it = entries_.erase(it);
        continue;
      }
      const bool now_changed =
          overflowed ||
          std::any_of(it->watches.begin(), it->watches.end(),
                      [&](int id) { return Contains(changed, id); });
      // Debounced: refreshed at the first quiet tick after a change (a
      // certificate and its key written one after the other are read
      // together), or after kMaxTicksPending ticks of changes.
      if (now_changed) ++it->ticks_pending;
      if (it->ticks_pending > 0 &&
          (!now_changed || it->ticks_pending >= kMaxTicksPending)) {
        it->ticks_pending = 0;
        due.push_back(std::move(store));
      }
      ++it;
    }
    UnwatchUnused(released);
  }
  // Outside the lock: Refresh reads and checks files.
  for (const auto& store : due) store->Refresh();
}

}  // namespace mesh::internal
