// A Cluster's transport_socket: an UpstreamTlsContext (gRFC A29) as an
// EndpointTls, with the certificates of the bootstrap's file_watcher
// provider instances it names. What mesh cannot honour, and could not
// ignore without weakening the check, is refused with the field's path.
#include <algorithm>
#include <memory>
#include <optional>
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

// A reference to a provider instance, in the current form
// (CertificateProviderPluginInstance) or the deprecated one
// (CommonTlsContext.CertificateProviderInstance) that older istiod versions
// send, alone or beside the current one for older clients.
struct InstanceRef {
  std::string field;  // where it came from, for errors
  std::string name;   // "default" when empty
};

template <typename Message>
InstanceRef RefOf(const std::string& field, const Message& m) {
  return {field, m.instance_name().empty() ? "default" : m.instance_name()};
}

// The one reference of `current` and `deprecated` (either may be absent);
// both present must name the same instance. nullopt: neither.
absl::StatusOr<std::optional<InstanceRef>> OneRef(
    std::optional<InstanceRef> current, std::optional<InstanceRef> deprecated) {
  if (current && deprecated && current->name != deprecated->name) {
    return FieldError(
        deprecated->field,
        absl::StrCat("names instance '", deprecated->name, "' but ",
                     current->field, " names '", current->name, "'"));
  }
  return current ? current : deprecated;
}

// The file_watcher instance `ref` names, with the file `ca` says (roots,
// or the certificate and key).
absl::StatusOr<const FileWatcherConfig*> ProviderFor(
    const InstanceRef& ref, const CertificateProviders& providers, bool ca) {
  const std::string path = ref.field + ".instance_name";
  auto it = providers.find(ref.name);
  if (it == providers.end()) {
    return FieldError(path,
                      absl::StrCat("'", ref.name,
                                   "' is not a certificate provider of the "
                                   "bootstrap (certificate_providers)"));
  }
  const FileWatcherConfig* watcher =
      it->second.file_watcher ? &*it->second.file_watcher : nullptr;
  if (watcher == nullptr) {
    return FieldError(
        path, absl::StrCat("'", ref.name, "' is a '", it->second.plugin_name,
                           "' provider; mesh supports "
                           "file_watcher"));
  }
  if (ca && watcher->ca_certificate_file.empty()) {
    return FieldError(path, absl::StrCat("'", ref.name,
                                         "' has no ca_certificate_file for "
                                         "the roots"));
  }
  if (!ca && watcher->certificate_file.empty()) {
    return FieldError(path, absl::StrCat("'", ref.name,
                                         "' has no certificate_file and "
                                         "private_key_file"));
  }
  return watcher;
}

// The checks gRFC A29 asks of a CertificateValidationContext, and its SAN
// matchers into `out`. Its roots' instance into `roots`.
absl::Status ConvertValidation(const tls_v3::CertificateValidationContext& v,
                               EndpointTls* out,
                               std::optional<InstanceRef>* roots) {
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
  if (v.has_ca_certificate_provider_instance()) {
    *roots = RefOf("ca_certificate_provider_instance",
                   v.ca_certificate_provider_instance());
  }
  // Envoy: with typed matchers, the untyped (deprecated) ones are ignored.
  const bool typed = v.match_typed_subject_alt_names_size() > 0;
  const int count = typed ? v.match_typed_subject_alt_names_size()
                          : v.match_subject_alt_names_size();
  const char* list =
      typed ? "match_typed_subject_alt_names" : "match_subject_alt_names";
  if (count > kMaxSanMatchers) {
    return FieldError(list,
                      absl::StrCat("more than ", kMaxSanMatchers, " matchers"));
  }
  for (int i = 0; i < count; ++i) {
    const std::string path = absl::StrCat(list, "[", i, "]");
    ServerNameMatcher::SanType type = ServerNameMatcher::SanType::kAny;
    const StringMatcher* matcher = nullptr;
    if (typed) {
      const auto& t = v.match_typed_subject_alt_names(i);
      absl::StatusOr<ServerNameMatcher::SanType> converted =
          ConvertSanType(t.san_type());
      if (!converted.ok()) return Within(path, converted.status());
      type = *converted;
      matcher = &t.matcher();
    } else {
      matcher = &v.match_subject_alt_names(i);
    }
    absl::StatusOr<ServerNameMatcher> m = ConvertSanMatcher(*matcher);
    if (!m.ok()) return Within(typed ? path + ".matcher" : path, m.status());
    m->san_type = type;
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
  // The client's own certificate: the current field, else the deprecated
  // one, else inline or SDS certificates (refused), else none.
  absl::StatusOr<std::optional<InstanceRef>> own =
      OneRef(c.has_tls_certificate_provider_instance()
                 ? std::optional<InstanceRef>(
                       RefOf("tls_certificate_provider_instance",
                             c.tls_certificate_provider_instance()))
                 : std::nullopt,
             c.has_tls_certificate_certificate_provider_instance()
                 ? std::optional<InstanceRef>(
                       RefOf("tls_certificate_certificate_provider_instance",
                             c.tls_certificate_certificate_provider_instance()))
                 : std::nullopt);
  if (!own.ok()) return own.status();
  if (!own->has_value() && c.tls_certificates_size() > 0) {
    return FieldError("tls_certificates",
                      "not supported: mesh takes its certificate from "
                      "tls_certificate_provider_instance");
  }
  if (!own->has_value() && c.tls_certificate_sds_secret_configs_size() > 0) {
    return FieldError("tls_certificate_sds_secret_configs",
                      "not supported: mesh takes its certificate from "
                      "tls_certificate_provider_instance");
  }
  // The roots and SAN matchers.
  using C = tls_v3::CommonTlsContext;
  std::optional<InstanceRef> roots;
  std::optional<InstanceRef> deprecated_roots;
  switch (c.validation_context_type_case()) {
    case C::kValidationContext:
      if (absl::Status s =
              Within("validation_context",
                     ConvertValidation(c.validation_context(), out, &roots));
          !s.ok()) {
        return s;
      }
      if (roots) roots->field = "validation_context." + roots->field;
      break;
    case C::kCombinedValidationContext: {
      const auto& combined = c.combined_validation_context();
      const std::string prefix = "combined_validation_context.";
      if (combined.has_validation_context_sds_secret_config()) {
        return FieldError(
            prefix + "validation_context_sds_secret_config",
            "not supported: mesh does not fetch secrets over SDS");
      }
      if (combined.has_validation_context_certificate_provider_instance()) {
        deprecated_roots =
            RefOf(prefix + "validation_context_certificate_provider_instance",
                  combined.validation_context_certificate_provider_instance());
      }
      if (absl::Status s =
              Within(prefix + "default_validation_context",
                     ConvertValidation(combined.default_validation_context(),
                                       out, &roots));
          !s.ok()) {
        return s;
      }
      if (roots) {
        roots->field = prefix + "default_validation_context." + roots->field;
      }
      break;
    }
    case C::kValidationContextSdsSecretConfig:
      return FieldError("validation_context_sds_secret_config",
                        "not supported: mesh does not fetch secrets over SDS");
    case C::kValidationContextCertificateProviderInstance:
      // Deprecated: roots only, no SAN matchers.
      deprecated_roots =
          RefOf("validation_context_certificate_provider_instance",
                c.validation_context_certificate_provider_instance());
      break;
    case C::VALIDATION_CONTEXT_TYPE_NOT_SET:
      return FieldError("validation_context",
                        "missing: mesh verifies every TLS server against "
                        "roots (validation_context or "
                        "combined_validation_context)");
  }
  absl::StatusOr<std::optional<InstanceRef>> ca =
      OneRef(roots, deprecated_roots);
  if (!ca.ok()) return ca.status();
  if (!ca->has_value()) {
    return FieldError(
        c.has_combined_validation_context()
            ? "combined_validation_context.default_validation_context."
              "ca_certificate_provider_instance"
            : "validation_context.ca_certificate_provider_instance",
        "missing: mesh takes the roots that verify the server from a "
        "provider instance of the bootstrap");
  }
  absl::StatusOr<const FileWatcherConfig*> ca_files =
      ProviderFor(**ca, providers, /*ca=*/true);
  if (!ca_files.ok()) return ca_files.status();
  out->certificates.trust_roots_file = (*ca_files)->ca_certificate_file;
  absl::Duration refresh = (*ca_files)->refresh_interval;
  if (own->has_value()) {
    absl::StatusOr<const FileWatcherConfig*> own_files =
        ProviderFor(**own, providers, /*ca=*/false);
    if (!own_files.ok()) return own_files.status();
    out->certificates.cert_chain_file = (*own_files)->certificate_file;
    out->certificates.private_key_file = (*own_files)->private_key_file;
    refresh = std::min(refresh, (*own_files)->refresh_interval);
  }
  // IdentityStore's floor.
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
  if (context.auto_sni_san_validation()) {
    return FieldError("typed_config.auto_sni_san_validation",
                      "not supported: mesh checks the SAN matchers, not the "
                      "server name");
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
