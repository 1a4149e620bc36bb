#include "src/tls/identity_store.h"

#include <grpc/support/log.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace mesh::internal {
namespace {

// One part of the identity: a file's contents, or the PEM given in code.
absl::StatusOr<std::string> ReadPart(const std::string& file,
                                     const std::string& pem,
                                     const char* field) {
  if (file.empty()) return pem;
  return ReadPemFile(file, field);
}

template <typename T, typename Pred>
void EraseIf(std::vector<T>& v, Pred pred) {
  v.erase(std::remove_if(v.begin(), v.end(), pred), v.end());
}

// Where a part came from, for messages.
std::string Source(const std::string& file, const char* pem_field) {
  return file.empty() ? std::string(pem_field) : absl::StrCat("'", file, "'");
}

}  // namespace

absl::StatusOr<std::shared_ptr<IdentityStore>> IdentityStore::Create(
    const IdentityOptions& options, std::function<absl::Time()> now) {
  return Load(options, std::move(now), /*chain_optional=*/false);
}

absl::StatusOr<std::shared_ptr<IdentityStore>> IdentityStore::CreateForEndpoint(
    const IdentityOptions& options, std::function<absl::Time()> now) {
  return Load(options, std::move(now), /*chain_optional=*/true);
}

absl::StatusOr<std::shared_ptr<IdentityStore>> IdentityStore::Load(
    const IdentityOptions& options, std::function<absl::Time()> now,
    bool chain_optional) {
  const bool has_key =
      !options.private_key_file.empty() || !options.private_key_pem.empty();
  if (!options.enabled() && !(chain_optional && !has_key)) {
    return absl::InvalidArgumentError(
        "identity: no certificate chain (cert_chain_file or cert_chain_pem)");
  }
  if (options.enabled() && !has_key) {
    return absl::InvalidArgumentError(
        "identity: no private key (private_key_file or private_key_pem)");
  }
  if (options.trust_roots_file.empty() && options.trust_roots_pem.empty()) {
    return absl::InvalidArgumentError(
        "identity: no trust roots (trust_roots_file or trust_roots_pem)");
  }
  if (options.refresh_interval < absl::Milliseconds(10)) {
    return absl::InvalidArgumentError(
        "identity: refresh_interval is below 10 ms");
  }
  std::shared_ptr<IdentityStore> store(
      new IdentityStore(options, std::move(now)));
  store->chain_optional_ = chain_optional;
  absl::StatusOr<IdentityMaterial> loaded = store->Read();
  absl::Status checked = loaded.ok() ? store->Check(*loaded) : loaded.status();
  if (!checked.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("identity: ", checked.message()));
  }
  loaded->generation = 1;
  MutexLock lock(&store->mu_);
  store->current_ =
      std::make_shared<const IdentityMaterial>(*std::move(loaded));
  store->generation_.store(1, std::memory_order_release);
  return store;
}

std::shared_ptr<const IdentityMaterial> IdentityStore::Current() const {
  MutexLock lock(&mu_);
  return current_;
}

bool IdentityStore::watches_files() const {
  return !options_.cert_chain_file.empty() ||
         !options_.private_key_file.empty() ||
         !options_.trust_roots_file.empty();
}

absl::StatusOr<IdentityMaterial> IdentityStore::Read() const {
  IdentityMaterial m;
  absl::StatusOr<std::string> chain = ReadPart(
      options_.cert_chain_file, options_.cert_chain_pem, "cert_chain_file");
  if (!chain.ok()) return chain.status();
  absl::StatusOr<std::string> key = ReadPart(
      options_.private_key_file, options_.private_key_pem, "private_key_file");
  if (!key.ok()) return key.status();
  absl::StatusOr<std::string> roots = ReadPart(
      options_.trust_roots_file, options_.trust_roots_pem, "trust_roots_file");
  if (!roots.ok()) return roots.status();
  m.cert_chain_pem = *std::move(chain);
  m.private_key_pem = *std::move(key);
  m.trust_roots_pem = *std::move(roots);
  return m;
}

absl::Status IdentityStore::Check(IdentityMaterial& m) const {
  if (chain_optional_ && !options_.enabled()) {
    absl::Status roots_ok = CheckTrustRoots(m.trust_roots_pem);
    if (!roots_ok.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(Source(options_.trust_roots_file, "trust_roots_pem"),
                       ": ", roots_ok.message()));
    }
    return absl::OkStatus();
  }
  absl::StatusOr<CertificateFacts> leaf =
      CheckKeyPair(m.cert_chain_pem, m.private_key_pem, now_());
  if (!leaf.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        Source(options_.cert_chain_file, "cert_chain_pem"), " with ",
        Source(options_.private_key_file, "private_key_pem"), ": ",
        leaf.status().message()));
  }
  absl::Status roots_ok = CheckTrustRoots(m.trust_roots_pem);
  if (!roots_ok.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Source(options_.trust_roots_file, "trust_roots_pem"), ": ",
                     roots_ok.message()));
  }
  m.leaf = *std::move(leaf);
  return absl::OkStatus();
}

void IdentityStore::LogOnce(const std::string& message) {
  {
    MutexLock lock(&mu_);
    if (message == last_logged_) return;
    last_logged_ = message;
  }
  gpr_log(GPR_ERROR, "mesh: identity: %s", message.c_str());
}

bool IdentityStore::Refresh() {
  if (!watches_files()) return false;
  MutexLock refreshing(&refresh_mu_);
  std::shared_ptr<const IdentityMaterial> current = Current();
  absl::StatusOr<IdentityMaterial> read = Read();
  absl::Status checked = read.status();
  if (read.ok() && read->cert_chain_pem == current->cert_chain_pem &&
      read->private_key_pem == current->private_key_pem &&
      read->trust_roots_pem == current->trust_roots_pem) {
    // Unchanged (or back to the version in use).
    if (!current->cert_chain_pem.empty() && now_() > current->leaf.not_after) {
      LogOnce(absl::StrCat(
          "the certificate in use (serial ", current->leaf.serial,
          ") expired at ",
          absl::FormatTime(current->leaf.not_after, absl::UTCTimeZone()),
          " and no valid replacement has come"));
    } else {
      MutexLock lock(&mu_);
      last_logged_.clear();
    }
    return false;
  }
  if (read.ok()) checked = Check(*read);
  if (!checked.ok()) {
    LogOnce(absl::StrCat("refused the new version: ", checked.message(),
                         "; keeping the certificate in use (serial ",
                         current->leaf.serial, ")"));
    return false;
  }
  read->generation = current->generation + 1;
  auto next = std::make_shared<const IdentityMaterial>(*std::move(read));
  if (next->cert_chain_pem.empty()) {
    gpr_log(GPR_INFO, "mesh: identity: now using new trust roots from %s",
            Source(options_.trust_roots_file, "trust_roots_pem").c_str());
  } else {
    gpr_log(
        GPR_INFO,
        "mesh: identity: now using certificate serial %s (was %s), valid "
        "until %s",
        next->leaf.serial.c_str(), current->leaf.serial.c_str(),
        absl::FormatTime(next->leaf.not_after, absl::UTCTimeZone()).c_str());
  }
  MutexLock lock(&mu_);
  generation_.store(next->generation, std::memory_order_release);
  current_ = std::move(next);
  last_logged_.clear();
  return true;
}

absl::StatusOr<std::shared_ptr<IdentityStore>> EndpointStores::For(
    const IdentityOptions& certificates) {
  {
    MutexLock lock(&mu_);
    for (const auto& [options, store] : stores_) {
      if (options == certificates) return store;
    }
    // Files not there yet are not read again at every call.
    for (const Failure& f : failures_) {
      if (f.options == certificates && absl::Now() < f.until) return f.status;
    }
  }
  // Read and checked without the lock: other sets stay available meanwhile.
  absl::StatusOr<std::shared_ptr<IdentityStore>> made =
      IdentityStore::CreateForEndpoint(certificates);
  MutexLock lock(&mu_);
  for (const auto& [options, store] : stores_) {
    if (options == certificates) return store;  // made meanwhile
  }
  if (!made.ok()) {
    EraseIf(failures_, [&](const Failure& f) {
      return f.options == certificates || absl::Now() >= f.until;
    });
    if (failures_.size() < kMax) {
      failures_.push_back(
          {certificates, made.status(), absl::Now() + kFailureHeld});
    }
    return made.status();
  }
  if (stores_.size() >= kMax) {
    // Sets no connection uses any more make room (only this list holds
    // them).
    EraseIf(stores_,
            [](const auto& entry) { return entry.second.use_count() == 1; });
  }
  if (stores_.size() >= kMax) {
    return absl::ResourceExhaustedError(
        absl::StrCat("more than ", kMax,
                     " distinct sets of endpoint TLS certificates in use"));
  }
  stores_.emplace_back(certificates, *made);
  if (on_new_ && (*made)->watches_files()) on_new_(*made);
  return made;
}

}  // namespace mesh::internal
