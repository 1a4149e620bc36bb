// A Cluster's transport_socket: an UpstreamTlsContext (gRFC A29) as an
// EndpointTls, with the certificates of the bootstrap's file_watcher
// provider instances it names. What mesh cannot honour, and could not
// ignore without weakening the check, is refused with the field's path.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "envoy/extensions/transport_sockets/tls/v3/tls.pb.h"
#include "src/discovery/xds/xds_convert.h"
#include "src/tls/server_name_match.h"

namespace mesh::internal::xds {
namespace {

namespace tls_v3 = ::envoy::extensions::transport_sockets::tls::v3;
using ::envoy::type::matcher::v3::StringMatcher;

constexpr char kUpstreamTlsContext[] =
    "envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext";
// At most this many SAN matchers per cluster.
constexpr int kMaxSanMatchers = 1000;

absl::StatusOr<ServerNameMatcher> ConvertSanMatcher(const StringMatcher& m) {
  ServerNameMatcher out;
  out.ignore_case = m.ignore_case();
  switch (m.match_pattern_case()) {
    case StringMatcher::kExact:
      out.kind = ServerNameMatcher::Kind::kExact;
      out.value = m.exact();
      break;
    case StringMatcher::kPrefix:
      out.kind = ServerNameMatcher::Kind::kPrefix;
      out.value = m.prefix();
      break;
    case StringMatcher::kSuffix:
      out.kind = ServerNameMatcher::Kind::kSuffix;
      out.value = m.suffix();
      break;
    case StringMatcher::kContains:
      out.kind = ServerNameMatcher::Kind::kContains;
      out.value = m.contains();
      break;
    case StringMatcher::kSafeRegex:
      out.kind = ServerNameMatcher::Kind::kRegex;
      out.value = m.safe_regex().regex();
      out.ignore_case = false;  // Envoy: no effect on safe_regex
      break;
    case StringMatcher::MATCH_PATTERN_NOT_SET:
      return FieldError("match_pattern", "missing (or unknown to mesh)");
  }
  if (absl::Status s = ValidateServerNameMatcher(out); !s.ok()) {
    return FieldError(out.kind == ServerNameMatcher::Kind::kRegex
                          ? "safe_regex.regex"
                          : "match_pattern",
                      s.message());
  }
  return out;
}

absl::StatusOr<ServerNameMatcher::SanType> ConvertSanType(
    tls_v3::SubjectAltNameMatcher::SanType type) {
  using T = tls_v3::SubjectAltNameMatcher;
  switch (type) {
    case T::DNS:
      return ServerNameMatcher::SanType::kDns;
    case T::URI:
      return ServerNameMatcher::SanType::kUri;
    case T::EMAIL:
      return ServerNameMatcher::SanType::kEmail;
    case T::IP_ADDRESS:
      return ServerNameMatcher::SanType::kIp;
    default:
      return FieldError("san_type",
                        absl::StrCat(T::SanType_Name(type).empty()
                                         ? absl::StrCat(static_cast<int>(type))
                                         : T::SanType_Name(type),
                                     " is not supported (DNS, URI, EMAIL and "
                                     "IP_ADDRESS are)"));
  }
}

// The provider instance `ref` names, which must be a file_watcher with
// the files `need` says ("certificate" or "ca").
absl::StatusOr<const FileWatcherConfig*> ProviderFor(
    const tls_v3::CertificateProviderPluginInstance& ref,
    const CertificateProviders& providers, bool ca) {
  const std::string name =
      ref.instance_name().empty() ? "default" : ref.instance_name();
  auto it = providers.find(name);
  if (it == providers.end()) {
    return FieldError("instance_name",
                      absl::StrCat("'", name,
                                   "' is not a certificate provider of the "
                                   "bootstrap (certificate_providers)"));
  }
  const FileWatcherConfig* watcher =
      it->second.file_watcher ? &*it->second.file_watcher : nullptr;
  if (watcher == nullptr) {
    return FieldError(
        "instance_name",
        absl::StrCat("'", name, "' is a '", it->second.plugin_name,
                     "' provider; mesh supports file_watcher"));
  }
  if (ca && watcher->ca_certificate_file.empty()) {
    return FieldError("instance_name",
                      absl::StrCat("'", name,
                                   "' has no ca_certificate_file for the "
                                   "roots"));
  }
  if (!ca && watcher->certificate_file.empty()) {
    return FieldError("instance_name",
                      absl::StrCat("'", name,
                                   "' has no certificate_file and "
                                   "private_key_file"));
  }
  return watcher;
}

// The checks gRFC A29 asks of a CertificateValidationContext, and its
// roots and SAN matchers into `out`.
absl::Status ConvertValidation(const tls_v3::CertificateValidationContext& v,
                               const CertificateProviders& providers,
                               EndpointTls* out, absl::Duration* refresh) {
  if (v.verify_certificate_spki_size() > 0) {
    return FieldError("verify_certificate_spki", "not supported");
  }
  if (v.verify_certificate_hash_size() > 0) {
    return FieldError("verify_certificate_hash", "not supported");
  }
  if (v.has_require_signed_certificate_timestamp()) {
    return FieldError("require_signed_certificate_timestamp", "not supported");
  }
  if (v.has_crl()) return FieldError("crl", "not supported");
  if (v.has_custom_validator_config()) {
    return FieldError("custom_validator_config", "not supported");
  }
  if (!v.has_ca_certificate_provider_instance()) {
    return FieldError("ca_certificate_provider_instance",
                      "missing: mesh takes the roots that verify the server "
                      "from a provider instance of the bootstrap");
  }
  absl::StatusOr<const FileWatcherConfig*> ca =
      ProviderFor(v.ca_certificate_provider_instance(), providers, true);
  if (!ca.ok()) return Within("ca_certificate_provider_instance", ca.status());
  out->certificates.trust_roots_file = (*ca)->ca_certificate_file;
  *refresh = std::min(*refresh, (*ca)->refresh_interval);
  if (v.match_subject_alt_names_size() +
          v.match_typed_subject_alt_names_size() >
      kMaxSanMatchers) {
    return FieldError("match_subject_alt_names",
                      absl::StrCat("more than ", kMaxSanMatchers, " matchers"));
  }
  for (int i = 0; i < v.match_subject_alt_names_size(); ++i) {
    absl::StatusOr<ServerNameMatcher> m =
        ConvertSanMatcher(v.match_subject_alt_names(i));
    if (!m.ok()) {
      return Within(absl::StrCat("match_subject_alt_names[", i, "]"),
                    m.status());
    }
    out->server_names.push_back(*std::move(m));
  }
  for (int i = 0; i < v.match_typed_subject_alt_names_size(); ++i) {
    const auto& typed = v.match_typed_subject_alt_names(i);
    const std::string path =
        absl::StrCat("match_typed_subject_alt_names[", i, "]");
    absl::StatusOr<ServerNameMatcher::SanType> type =
        ConvertSanType(typed.san_type());
    if (!type.ok()) return Within(path, type.status());
    absl::StatusOr<ServerNameMatcher> m = ConvertSanMatcher(typed.matcher());
    if (!m.ok()) return Within(path + ".matcher", m.status());
    m->san_type = *type;
    out->server_names.push_back(*std::move(m));
  }
  return absl::OkStatus();
}

absl::Status ConvertCommon(const tls_v3::CommonTlsContext& c,
                           const CertificateProviders& providers,
                           EndpointTls* out) {
  if (c.has_tls_params()) {
    return FieldError("tls_params",
                      "not supported: gRPC chooses versions and ciphers");
  }
  if (c.has_custom_handshaker()) {
    return FieldError("custom_handshaker", "not supported");
  }
  if (c.has_tls_certificate_certificate_provider_instance()) {
    return FieldError("tls_certificate_certificate_provider_instance",
                      "deprecated and not supported; use "
                      "tls_certificate_provider_instance");
  }
  absl::Duration refresh = absl::InfiniteDuration();
  if (c.has_tls_certificate_provider_instance()) {
    absl::StatusOr<const FileWatcherConfig*> own =
        ProviderFor(c.tls_certificate_provider_instance(), providers, false);
    if (!own.ok()) {
      return Within("tls_certificate_provider_instance", own.status());
    }
    out->certificates.cert_chain_file = (*own)->certificate_file;
    out->certificates.private_key_file = (*own)->private_key_file;
    refresh = (*own)->refresh_interval;
  } else if (c.tls_certificates_size() > 0) {
    return FieldError("tls_certificates",
                      "not supported: mesh takes its certificate from "
                      "tls_certificate_provider_instance");
  } else if (c.tls_certificate_sds_secret_configs_size() > 0) {
    return FieldError("tls_certificate_sds_secret_configs",
                      "not supported: mesh takes its certificate from "
                      "tls_certificate_provider_instance");
  }
  using C = tls_v3::CommonTlsContext;
  absl::Status s;
  switch (c.validation_context_type_case()) {
    case C::kValidationContext:
      s = Within(
          "validation_context",
          ConvertValidation(c.validation_context(), providers, out, &refresh));
      break;
    case C::kCombinedValidationContext: {
      const auto& combined = c.combined_validation_context();
      if (combined.has_validation_context_sds_secret_config()) {
        return FieldError(
            "combined_validation_context.validation_context_sds_secret_config",
            "not supported: mesh does not fetch secrets over SDS");
      }
      if (combined.has_validation_context_certificate_provider_instance()) {
        return FieldError(
            "combined_validation_context."
            "validation_context_certificate_provider_instance",
            "deprecated and not supported; use "
            "default_validation_context.ca_certificate_provider_instance");
      }
      if (!combined.has_default_validation_context()) {
        return FieldError(
            "combined_validation_context.default_validation_context",
            "missing");
      }
      s = Within("combined_validation_context.default_validation_context",
                 ConvertValidation(combined.default_validation_context(),
                                   providers, out, &refresh));
      break;
    }
    case C::kValidationContextSdsSecretConfig:
      return FieldError("validation_context_sds_secret_config",
                        "not supported: mesh does not fetch secrets over SDS");
    case C::kValidationContextCertificateProviderInstance:
      return FieldError("validation_context_certificate_provider_instance",
                        "deprecated and not supported; use "
                        "validation_context.ca_certificate_provider_instance");
    case C::VALIDATION_CONTEXT_TYPE_NOT_SET:
      return FieldError("validation_context",
                        "missing: mesh verifies every TLS server against "
                        "roots (validation_context or "
                        "combined_validation_context)");
  }
  if (!s.ok()) return s;
  // IdentityStore's floor; gRPC's file watcher reads at most every second.
  out->certificates.refresh_interval =
      std::max(refresh, absl::Milliseconds(10));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<const EndpointTls>> ConvertTransportSocket(
    const envoy::config::core::v3::TransportSocket& socket,
    const CertificateProviders& providers) {
  if (!socket.has_typed_config()) {
    return FieldError("typed_config",
                      absl::StrCat("missing (transport socket '", socket.name(),
                                   "' without a config)"));
  }
  if (TypeNameOf(socket.typed_config()) != kUpstreamTlsContext) {
    return FieldError("typed_config",
                      absl::StrCat(TypeNameOf(socket.typed_config()),
                                   " is not supported; mesh speaks TLS with "
                                   "an UpstreamTlsContext"));
  }
  tls_v3::UpstreamTlsContext context;
  if (!socket.typed_config().UnpackTo(&context)) {
    return FieldError("typed_config", "UpstreamTlsContext does not parse");
  }
  auto out = std::make_shared<EndpointTls>();
  out->sni = context.sni();
  if (absl::Status s = Within(
          "typed_config.common_tls_context",
          ConvertCommon(context.common_tls_context(), providers, out.get()));
      !s.ok()) {
    return s;
  }
  return std::shared_ptr<const EndpointTls>(std::move(out));
}

std::string TlsIdentityLabel(const EndpointTls& tls) {
  for (const ServerNameMatcher& m : tls.server_names) {
    if (m.kind == ServerNameMatcher::Kind::kExact && !m.ignore_case) {
      return m.value;
    }
  }
  return "";
}

}  // namespace mesh::internal::xds
