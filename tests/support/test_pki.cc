#include "tests/support/test_pki.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace mesh::testing {
namespace {

void WriteTextFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

// "YYYYMMDDHHMMSSZ", as `openssl ca` takes validity dates.
std::string AsnTime(absl::Time t) {
  return absl::FormatTime("%Y%m%d%H%M%SZ", t, absl::UTCTimeZone());
}

constexpr char kNewKey[] = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";

}  // namespace

std::string ReadTextFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

void ReplaceTextFile(const std::filesystem::path& path,
                     const std::string& text) {
  std::filesystem::path next = path;
  next += ".next";
  WriteTextFile(next, text);
  std::filesystem::rename(next, path);
}

absl::StatusOr<std::unique_ptr<TestPki>> TestPki::Create(
    const std::string& ca_name) {
  if (std::system("command -v openssl >/dev/null 2>&1") != 0) {
    return absl::FailedPreconditionError(
        "the `openssl` command is not installed; it makes the tests' "
        "certificates (scripts/install-deps.sh installs it)");
  }
  std::error_code error;
  const std::filesystem::path base =
      std::filesystem::temp_directory_path(error);  // $TMPDIR, else /tmp
  std::string tmpl = (base / "mesh_pki_XXXXXX").string();
  if (error || mkdtemp(tmpl.data()) == nullptr) {
    return absl::InternalError("cannot create a temporary directory under " +
                               base.string());
  }
  std::unique_ptr<TestPki> pki(new TestPki(tmpl));
  const std::filesystem::path& dir = pki->dir_;
  // A configuration of our own, so the system's openssl.cnf does not matter;
  // the [ca] part is for `openssl ca`, which alone takes validity dates.
  WriteTextFile(
      dir / "pki.cnf",
      absl::StrCat("[req]\ndistinguished_name = dn\n[dn]\n"
                   "[v3_ca]\nbasicConstraints = critical,CA:true\n"
                   "keyUsage = critical,keyCertSign,cRLSign\n"
                   "subjectKeyIdentifier = hash\n"
                   "[ca]\ndefault_ca = test_ca\n[test_ca]\n"
                   "database = ",
                   (dir / "index.txt").string(), "\nnew_certs_dir = ",
                   dir.string(), "\nserial = ", (dir / "serial").string(),
                   "\ndefault_md = sha256\npolicy = any\n"
                   "unique_subject = no\n[any]\ncommonName = supplied\n"));
  WriteTextFile(dir / "index.txt", "");
  absl::Status made = pki->Run(absl::StrCat(
      "openssl req -x509 -config ", (dir / "pki.cnf").string(),
      " -extensions v3_ca -days 2 ", kNewKey, " -subj /CN=", ca_name,
      " -keyout ", (dir / "ca.key").string(), " -out ",
      (dir / "ca.pem").string()));
  if (!made.ok()) return made;
  pki->ca_pem_ = ReadTextFile(dir / "ca.pem");
  return pki;
}

TestPki::~TestPki() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

absl::Status TestPki::Run(const std::string& command) const {
  const std::string log = (dir_ / "openssl.log").string();
  int rc = std::system(
      absl::StrCat("timeout 30 ", command, " >", log, " 2>&1").c_str());
  if (rc == 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("`", command, "` failed (status ", rc,
                                          "): ", ReadTextFile(log)));
}

absl::StatusOr<KeyPair> TestPki::Issue(const std::string& name,
                                       const LeafOptions& options) {
  auto path = [&](const std::string& suffix) {
    return (dir_ / (name + suffix)).string();
  };
  // A self-signed certificate has no issuer key to name.
  std::string ext = absl::StrCat(
      "basicConstraints = CA:FALSE\n",
      options.self_signed ? "" : "authorityKeyIdentifier = keyid\n",
      "extendedKeyUsage = serverAuth,clientAuth\n");
  if (!options.sans.empty()) {
    absl::StrAppend(&ext, "subjectAltName = ", absl::StrJoin(options.sans, ","),
                    "\n");
  }
  WriteTextFile(path(".ext"), ext);
  const std::string cn = options.cn.empty() ? name : options.cn;
  absl::Status made = Run(absl::StrCat(
      "openssl req -new -config ", (dir_ / "pki.cnf").string(), " ", kNewKey,
      " -subj /CN=", cn, " -keyout ", path(".key"), " -out ", path(".csr")));
  if (!made.ok()) return made;
  const int serial = next_serial_++;
  // As OpenSSL prints serials: whole bytes, so an even number of digits.
  std::string serial_hex = absl::StrFormat("%X", serial);
  if (serial_hex.size() % 2 == 1) serial_hex.insert(0, "0");
  if (options.expired) {
    WriteTextFile(dir_ / "serial", serial_hex + "\n");
    const absl::Time now = absl::Now();
    made = Run(absl::StrCat(
        "openssl ca -batch -notext -config ", (dir_ / "pki.cnf").string(),
        " -cert ", (dir_ / "ca.pem").string(), " -keyfile ",
        (dir_ / "ca.key").string(), " -startdate ",
        AsnTime(now - absl::Hours(25)), " -enddate ",
        AsnTime(now - absl::Seconds(1)), " -in ", path(".csr"), " -out ",
        path(".pem"), " -extfile ", path(".ext")));
  } else if (options.self_signed) {
    made = Run(absl::StrCat("openssl x509 -req -in ", path(".csr"),
                            " -signkey ", path(".key"), " -set_serial ", serial,
                            " -days 1 -out ", path(".pem"), " -extfile ",
                            path(".ext")));
  } else {
    made = Run(absl::StrCat("openssl x509 -req -in ", path(".csr"), " -CA ",
                            (dir_ / "ca.pem").string(), " -CAkey ",
                            (dir_ / "ca.key").string(), " -set_serial ", serial,
                            " -days 1 -out ", path(".pem"), " -extfile ",
                            path(".ext")));
  }
  if (!made.ok()) return made;
  KeyPair pair;
  pair.key_file = path(".key");
  pair.cert_file = path(".pem");
  pair.key = ReadTextFile(pair.key_file);
  pair.cert = ReadTextFile(pair.cert_file);
  pair.serial = serial_hex;
  return pair;
}

}  // namespace mesh::testing
