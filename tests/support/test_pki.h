// TestPki: certificates made at run time with the `openssl` command, for
// the TLS tests: one CA, and leaf certificates it signs with the names,
// serial and validity a test asks for. EC P-256 keys.
//
//   auto pki = TestPki::Create();  // StatusOr; says so if openssl is missing
//   LeafOptions leaf;
//   leaf.sans = {"DNS:books.test"};
//   auto server = (*pki)->Issue("server", leaf);
//   // server->cert, server->key (PEM), server->cert_file, server->serial
//
// The files live in a fresh directory under $TMPDIR (else /tmp), removed
// with the TestPki. Tests and benchmarks use it (no test framework needed).
// Not thread-safe.
#ifndef MESH_TESTS_SUPPORT_TEST_PKI_H_
#define MESH_TESTS_SUPPORT_TEST_PKI_H_

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace mesh::testing {

struct KeyPair {
  std::string key;   // PEM
  std::string cert;  // PEM
  std::filesystem::path key_file;
  std::filesystem::path cert_file;
  // The certificate's serial number as OpenSSL prints it: upper-case hex of
  // whole bytes ("1A", "0100").
  std::string serial;
};

struct LeafOptions {
  // Subject CN; empty: the leaf's name.
  std::string cn;
  // subjectAltName entries as openssl writes them: "DNS:books.test",
  // "URI:spiffe://mesh.test/ns/a/sa/b", "IP:127.0.0.1".
  std::vector<std::string> sans;
  // Valid from yesterday for one day (expired a second ago): no longer
  // valid. Default: valid from now for a day.
  bool expired = false;
  // Signed with its own key instead of the CA's: a self-signed certificate
  // no trust root vouches for.
  bool self_signed = false;
};

// LeafOptions with these subjectAltName entries and nothing else.
inline LeafOptions WithSans(std::vector<std::string> sans) {
  LeafOptions leaf;
  leaf.sans = std::move(sans);
  return leaf;
}

class TestPki {
 public:
  // A fresh CA whose subject CN is `ca_name`.
  static absl::StatusOr<std::unique_ptr<TestPki>> Create(
      const std::string& ca_name = "mesh-test-ca");
  ~TestPki();

  // A leaf certificate and its key, signed by the CA, usable by servers and
  // clients alike; files `name`.pem and `name`.key (replaced if they exist).
  absl::StatusOr<KeyPair> Issue(const std::string& name,
                                const LeafOptions& options = {});

  const std::string& ca_pem() const { return ca_pem_; }
  std::filesystem::path ca_file() const { return dir_ / "ca.pem"; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  explicit TestPki(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // Runs `command` in a shell (bounded to 30 s); an error naming it, with
  // its output, unless it exits 0.
  absl::Status Run(const std::string& command) const;

  std::filesystem::path dir_;
  std::string ca_pem_;
  int next_serial_ = 0x10;
};

std::string ReadTextFile(const std::filesystem::path& path);
// Writes `text` to a temporary file beside `path` and renames it over
// `path`, as certificate agents do, so a reader sees the old or the new
// file whole.
void ReplaceTextFile(const std::filesystem::path& path,
                     const std::string& text);

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_TEST_PKI_H_
