// IdentityStore: the workload's identity (MeshOptions::identity) as last
// checked: certificate chain, private key and trust roots, read from files
// or PEM, each version checked before use (certificate_check.h).
//
//   auto store = IdentityStore::Create(options.identity);  // StatusOr
//   std::shared_ptr<const IdentityMaterial> id = (*store)->Current();
//   (*store)->Refresh();  // on a timer: picks up replaced files
//
// Thread-safe. Current() is a copy of a shared_ptr under a lock; what it
// returns never changes.
#ifndef MESH_SRC_TLS_IDENTITY_STORE_H_
#define MESH_SRC_TLS_IDENTITY_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "mesh/tls.h"
#include "src/base/mutex.h"
#include "src/tls/certificate_check.h"

namespace mesh::internal {

// One checked version of the identity.
struct IdentityMaterial {
  std::string cert_chain_pem;
  std::string private_key_pem;
  std::string trust_roots_pem;
  CertificateFacts leaf;
  // 1 for the first version; one more for each replacement taken.
  uint64_t generation = 0;
};

class IdentityStore {
 public:
  // Reads and checks the identity. INVALID_ARGUMENT naming the field or file
  // and what is wrong with it. `now` is the clock validity is checked
  // against (tests pass their own).
  static absl::StatusOr<std::shared_ptr<IdentityStore>> Create(
      const IdentityOptions& options,
      std::function<absl::Time()> now = absl::Now);

  // The same for EndpointTls::certificates: the roots are required, the
  // chain and key optional (together); without them Current() has an empty
  // chain and leaf.
  static absl::StatusOr<std::shared_ptr<IdentityStore>> CreateForEndpoint(
      const IdentityOptions& options,
      std::function<absl::Time()> now = absl::Now);

  std::shared_ptr<const IdentityMaterial> Current() const;
  // Current()->generation, without the lock (for the per-call check).
  uint64_t generation() const {
    return generation_.load(std::memory_order_acquire);
  }

  // Reads the files again. A version that differs from the current one and
  // checks out becomes current (true; logged with its serial). One that does
  // not check out is refused with a log line naming the file and the reason
  // (once per distinct reason: a bad file left in place is not logged again
  // at every refresh) and the current version stays. (An agent that writes
  // the certificate, then the key, may be caught in between: that version
  // is refused, and the next refresh takes the pair.) The current version
  // expiring with no replacement is logged once too.
  bool Refresh();

  // Whether any part comes from a file (else Refresh never changes
  // anything).
  bool watches_files() const;
  const IdentityOptions& options() const { return options_; }

 private:
  IdentityStore(IdentityOptions options, std::function<absl::Time()> now)
      : options_(std::move(options)), now_(std::move(now)) {}
  // Checks the options' shape, reads and checks the first version.
  static absl::StatusOr<std::shared_ptr<IdentityStore>> Load(
      const IdentityOptions& options, std::function<absl::Time()> now,
      bool chain_optional);

  // Reads every part (files or PEM), unchecked.
  absl::StatusOr<IdentityMaterial> Read() const;
  // Checks a read version's parts together and fills in its leaf's facts.
  absl::Status Check(IdentityMaterial& m) const;
  // Logs `message` unless it is the last one logged.
  void LogOnce(const std::string& message);

  const IdentityOptions options_;
  const std::function<absl::Time()> now_;
  bool chain_optional_ = false;
  mutable Mutex mu_;
  std::shared_ptr<const IdentityMaterial> current_ ABSL_GUARDED_BY(mu_);
  std::atomic<uint64_t> generation_{0};
  // The last problem logged, so that it is logged once.
  std::string last_logged_ ABSL_GUARDED_BY(mu_);
  // Refresh runs one at a time.
  Mutex refresh_mu_;
};

// The stores of the certificate sets endpoints' EndpointTls name: one per
// distinct set, made at first use (its files read outside the lock), at
// most kMax in use (a control plane names a handful; sets no connection
// holds any more make room). A set whose files cannot be read is not tried
// again for a second. `on_new` is told of each new store that reads files
// (to schedule its refresh; it should hold it weakly, so that it can go).
//
// Thread-safe.
class EndpointStores {
 public:
  static constexpr size_t kMax = 64;

  explicit EndpointStores(
      std::function<void(std::shared_ptr<IdentityStore>)> on_new = nullptr)
      : on_new_(std::move(on_new)) {}

  // The store of `certificates`; IdentityStore::CreateForEndpoint's error,
  // or RESOURCE_EXHAUSTED past kMax sets.
  absl::StatusOr<std::shared_ptr<IdentityStore>> For(
      const IdentityOptions& certificates);

 private:
  static constexpr absl::Duration kFailureHeld = absl::Seconds(1);
  struct Failure {
    IdentityOptions options;
    absl::Status status;
    absl::Time until;
  };

  const std::function<void(std::shared_ptr<IdentityStore>)> on_new_;
  Mutex mu_;
  std::vector<std::pair<IdentityOptions, std::shared_ptr<IdentityStore>>>
      stores_ ABSL_GUARDED_BY(mu_);
  std::vector<Failure> failures_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::internal

#endif  // MESH_SRC_TLS_IDENTITY_STORE_H_
