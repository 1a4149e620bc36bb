// IdentityWatch: certificate files taken within a second of being
// written, instead of at the next refresh_interval (60 s by default). One
// inotify instance (DirectoryEvents) watches the directories that hold the
// files of every IdentityStore given to it; a store whose directory saw a
// change is refreshed (IdentityStore::Refresh, which refuses a half-written
// pair as ever) once the directory has been quiet for a tick, so that a
// certificate and the key written after it are read together. Polling
// every refresh_interval stays, run by the owner, as the fallback for what
// this cannot see: no inotify, a directory it cannot watch, a file behind
// a symlink into another directory.
//
//   IdentityWatch watch;
//   if (watch.Add(store).ok()) { /* run watch.Tick() every kTick */ }
//
// Thread-safe. Tick() is meant for one thread (the Mesh's timer thread),
// Add from any.
#ifndef MESH_SRC_TLS_IDENTITY_WATCH_H_
#define MESH_SRC_TLS_IDENTITY_WATCH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "src/base/directory_events.h"
#include "src/base/mutex.h"
#include "src/tls/identity_store.h"

namespace mesh::internal {

class IdentityWatch {
 public:
  // How often Tick() should run: a change is taken within two ticks of the
  // last write to its directory (one to see it, one quiet).
  static constexpr absl::Duration kTick = absl::Milliseconds(200);
  // A directory that never goes quiet still gets its stores refreshed
  // this often.
  static constexpr int kMaxTicksPending = 4;

  // The inotify instance is made at the first Add(): a Mesh without files
  // to watch holds none (they are limited per user).
  IdentityWatch() = default;
  ~IdentityWatch();

  // Watches the directories of `store`'s files; the store is held weakly
  // and forgotten (its directories unwatched) once gone. OK, or why its
  // files are not watched (no inotify, a directory that cannot be watched):
  // the caller's polling is then all there is for it.
  absl::Status Add(const std::shared_ptr<IdentityStore>& store);

  // Reads the events since the last tick and refreshes the stores whose
  // directories changed before that and not since (or have waited
  // kMaxTicksPending ticks).
  void Tick();

 private:
  struct Entry {
    std::weak_ptr<IdentityStore> store;
    std::vector<int> watches;  // DirectoryEvents ids
    int ticks_pending = 0;     // 0: nothing changed
  };
  // Ends the watches no entry uses any more.
  void UnwatchUnused(const std::vector<int>& ids)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Mutex mu_;
  // Null before the first Add(), or when it could not be had (why in
  // `unavailable_`).
  std::unique_ptr<DirectoryEvents> events_ ABSL_GUARDED_BY(mu_);
  absl::Status unavailable_ ABSL_GUARDED_BY(mu_);
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_TLS_IDENTITY_WATCH_H_
