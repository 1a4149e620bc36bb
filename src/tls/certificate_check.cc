#include "src/tls/certificate_check.h"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/tls/openssl_owners.h"

namespace mesh::internal {
namespace {

// The library's last error, for a message; clears its queue.
std::string LastError() {
  unsigned long code = ERR_peek_last_error();  // NOLINT(runtime/int)
  std::string text;
  if (code != 0) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof(buffer));
    text = buffer;
  }
  ERR_clear_error();
  return text.empty() ? "no detail" : text;
}

// Null for empty input (and on allocation failure): callers treat it as
// "nothing to read".
Bio MemoryBio(absl::string_view pem) {
  if (pem.empty()) return nullptr;
  return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// Never asks for a passphrase: without a callback OpenSSL would prompt on
// the terminal (and block) for an encrypted key.
int NoPassphrase(char* /*buf*/, int /*size*/, int /*rwflag*/,
                 void* /*userdata*/) {
  return 0;
}

// Leaves the library's error queue empty, however the check ends.
struct ClearErrorsOnExit {
  ~ClearErrorsOnExit() { ERR_clear_error(); }
};

// PEM certificate blocks in `pem`, by their armour lines (both spellings
// PEM_read_bio_X509 reads).
size_t CountCertificateBlocks(absl::string_view pem) {
  size_t n = 0;
  for (absl::string_view begin :
       {absl::string_view("-----BEGIN CERTIFICATE-----"),
        absl::string_view("-----BEGIN X509 CERTIFICATE-----")}) {
    for (size_t at = pem.find(begin); at != absl::string_view::npos;
         at = pem.find(begin, at + 1)) {
      ++n;
    }
  }
  return n;
}

// Parses every certificate block of `pem`: how many parsed, and the error
// that stopped the parse (if it stopped early).
size_t ParseAll(absl::string_view pem, std::string* error) {
  Bio bio = MemoryBio(pem);
  if (bio == nullptr) return 0;
  size_t parsed = 0;
  while (Certificate(
      PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr))) {
    ++parsed;
  }
  *error = LastError();
  return parsed;
}

// Unreadable: nullopt (the validity check then refuses the certificate).
std::optional<absl::Time> ToTime(const ASN1_TIME* t) {
  struct tm tm = {};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return std::nullopt;
  return absl::FromTimeT(timegm(&tm));
}

std::string AsnString(const ASN1_STRING* s) {
  if (s == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                     static_cast<size_t>(ASN1_STRING_length(s)));
}

CertificateFacts FactsOf(X509* cert) {
  CertificateFacts facts;
  std::unique_ptr<BIGNUM, FreeBignum> serial(
      ASN1_INTEGER_to_BN(X509_get_serialNumber(cert), nullptr));
  if (serial != nullptr) {
    char* hex = BN_bn2hex(serial.get());
    if (hex != nullptr) {
      facts.serial = hex;
      OPENSSL_free(hex);
    }
  }
  X509_NAME* subject = X509_get_subject_name(cert);
  int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (index >= 0) {
    unsigned char* utf8 = nullptr;
    int length = ASN1_STRING_to_UTF8(
        &utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index)));
    if (length >= 0 && utf8 != nullptr) {
      facts.subject_cn.assign(reinterpret_cast<char*>(utf8),
                              static_cast<size_t>(length));
    }
    OPENSSL_free(utf8);
  }
  std::unique_ptr<GENERAL_NAMES, FreeNames> names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (names != nullptr) {
    // int in OpenSSL, size_t in BoringSSL.
    const int count = static_cast<int>(sk_GENERAL_NAME_num(names.get()));
    for (int i = 0; i < count; ++i) {
      const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
      if (name->type == GEN_DNS) {
        facts.dns_names.push_back(AsnString(name->d.dNSName));
      } else if (name->type == GEN_URI) {
        facts.uri_names.push_back(AsnString(name->d.uniformResourceIdentifier));
      }
    }
  }
  std::optional<absl::Time> not_before = ToTime(X509_get0_notBefore(cert));
  std::optional<absl::Time> not_after = ToTime(X509_get0_notAfter(cert));
  facts.validity_readable = not_before.has_value() && not_after.has_value();
  facts.not_before = not_before.value_or(absl::InfiniteFuture());
  facts.not_after = not_after.value_or(absl::InfinitePast());
  return facts;
}

absl::StatusOr<Certificate> ParseLeaf(absl::string_view pem) {
  Bio bio = MemoryBio(pem);
  Certificate cert(bio == nullptr ? nullptr
                                  : PEM_read_bio_X509(bio.get(), nullptr,
                                                      NoPassphrase, nullptr));
  if (cert == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("no PEM certificate could be read (", LastError(), ")"));
  }
  return cert;
}

}  // namespace

absl::StatusOr<std::string> ReadPemFile(const std::string& path,
                                        absl::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " '", path, "' cannot be read"));
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<CertificateFacts> ReadLeafCertificate(absl::string_view pem) {
  ClearErrorsOnExit clear;
  absl::StatusOr<Certificate> cert = ParseLeaf(pem);
  if (!cert.ok()) return cert.status();
  return FactsOf(cert->get());
}

absl::StatusOr<CertificateFacts> ReadDerCertificate(absl::string_view der) {
  ClearErrorsOnExit clear;
  const auto* bytes = reinterpret_cast<const unsigned char*>(der.data());
  Certificate cert(d2i_X509(nullptr, &bytes, static_cast<long>(der.size())));
  if (cert == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("the DER certificate does not parse (", LastError(), ")"));
  }
  return FactsOf(cert.get());
}

absl::StatusOr<CertificateFacts> CheckKeyPair(absl::string_view chain_pem,
                                              absl::string_view key_pem,
                                              absl::Time now) {
  ClearErrorsOnExit clear;
  absl::StatusOr<Certificate> cert = ParseLeaf(chain_pem);
  if (!cert.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("certificate chain: ", cert.status().message()));
  }
  // The whole chain: a truncated intermediate would otherwise be dropped
  // silently by the TLS library and the chain sent short.
  std::string chain_error;
  const size_t blocks = CountCertificateBlocks(chain_pem);
  const size_t parsed = ParseAll(chain_pem, &chain_error);
  if (parsed != blocks) {
    return absl::InvalidArgumentError(
        absl::StrCat("certificate chain: certificate ", parsed + 1, " of ",
                     blocks, " does not parse (", chain_error, ")"));
  }
  Bio bio = MemoryBio(key_pem);
  std::unique_ptr<EVP_PKEY, FreeKey> key(
      bio == nullptr
          ? nullptr
          : PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "private key: no PEM private key could be read (", LastError(), ")"));
  }
  CertificateFacts facts = FactsOf(cert->get());
  if (X509_check_private_key(cert->get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(
        "the private key is not the key of the certificate (serial ",
        facts.serial, ")"));
  }
  if (!facts.validity_readable) {
    return absl::InvalidArgumentError(
        absl::StrCat("the certificate's (serial ", facts.serial,
                     ") validity dates cannot be read"));
  }
  if (now < facts.not_before) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the certificate (serial ", facts.serial, ") is not valid before ",
        absl::FormatTime(facts.not_before, absl::UTCTimeZone())));
  }
  if (now > facts.not_after) {
    return absl::InvalidArgumentError(
        absl::StrCat("the certificate (serial ", facts.serial, ") expired at ",
                     absl::FormatTime(facts.not_after, absl::UTCTimeZone())));
  }
  return facts;
}

absl::Status CheckTrustRoots(absl::string_view pem) {
  ClearErrorsOnExit clear;
  const size_t blocks = CountCertificateBlocks(pem);
  if (blocks == 0) {
    return absl::InvalidArgumentError("no PEM certificate in the trust roots");
  }
  std::string error;
  const size_t parsed = ParseAll(pem, &error);
  if (parsed != blocks) {
    return absl::InvalidArgumentError(
        absl::StrCat("trust roots: certificate ", parsed + 1, " of ", blocks,
                     " does not parse (", error, ")"));
  }
  return absl::OkStatus();
}

bool CarriesIdentity(absl::string_view identity,
                     const std::vector<std::string>& dns_names,
                     const std::vector<std::string>& uri_names) {
  if (identity.empty()) return false;
  if (absl::StrContains(identity, "://")) {
    for (const std::string& uri : uri_names) {
      if (uri == identity) return true;
    }
    return false;
  }
  for (const std::string& dns : dns_names) {
    if (absl::EqualsIgnoreCase(dns, identity)) return true;
  }
  return false;
}

std::string DescribeNames(const std::vector<std::string>& dns_names,
                          const std::vector<std::string>& uri_names) {
  std::vector<std::string> all;
  for (const std::string& d : dns_names) all.push_back("DNS:" + d);
  for (const std::string& u : uri_names) all.push_back("URI:" + u);
  if (all.empty()) return "no DNS or URI names";
  return absl::StrJoin(all, ", ");
}

}  // namespace mesh::internal
