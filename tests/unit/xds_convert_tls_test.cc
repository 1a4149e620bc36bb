// A Cluster's UpstreamTlsContext from the wire
// (src/discovery/xds/xds_convert.h): certificate provider instances, SAN
// matchers, what is refused and why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "envoy/extensions/transport_sockets/tls/v3/tls.pb.h"
#include "src/discovery/xds/xds_convert.h"
#include "tests/support/xds_convert_fixtures.h"

namespace mesh::internal::xds {
namespace {

using namespace fixtures;  // NOLINT: the shared helpers, types, matchers
namespace tls_v3 = ::envoy::extensions::transport_sockets::tls::v3;

CertificateProviders TestProviders() {
  CertificateProviders p;
  FileWatcherConfig all;
  all.certificate_file = "/certs/cert.pem";
  all.private_key_file = "/certs/key.pem";
  all.ca_certificate_file = "/certs/ca.pem";
  all.refresh_interval = absl::Seconds(30);
  p["default"] = CertificateProvider{"file_watcher", "{}", all};
  FileWatcherConfig roots;
  roots.ca_certificate_file = "/roots/ca.pem";
  roots.refresh_interval = absl::Seconds(5);
  p["roots"] = CertificateProvider{"file_watcher", "{}", roots};
  p["vault"] = CertificateProvider{"vault", "{}", std::nullopt};
  return p;
}

// An EDS cluster whose transport_socket holds `context` (UpstreamTlsContext
// in text form).
Cluster TlsCluster(const std::string& context) {
  tls_v3::UpstreamTlsContext upstream =
      Parse<tls_v3::UpstreamTlsContext>(context);
  Cluster cluster = EdsCluster("");
  cluster.mutable_transport_socket()->set_name("envoy.transport_sockets.tls");
  cluster.mutable_transport_socket()->mutable_typed_config()->PackFrom(
      upstream);
  return cluster;
}

std::string TlsClusterError(const std::string& context) {
  absl::StatusOr<ClusterResource> c =
      ConvertCluster(TlsCluster(context), TestProviders());
  EXPECT_FALSE(c.ok()) << context;
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(c.status().message());
}

// What istiod sends a proxyless client.
constexpr char kIstioContext[] = R"pb(
  common_tls_context {
    tls_certificate_provider_instance {
      instance_name: "default"
      certificate_name: "default"
    }
    combined_validation_context {
      default_validation_context {
        ca_certificate_provider_instance {
          instance_name: "default"
          certificate_name: "ROOTCA"
        }
        match_subject_alt_names { exact: "spiffe://cluster.local/ns/a/sa/b" }
        match_subject_alt_names { prefix: "spiffe://cluster.local/ns/c/" }
      }
    }
  }
  sni: "outbound_.7000_._.echo.a.svc.cluster.local"
)pb";

TEST(ConvertCluster, UpstreamTlsContextFromProviderInstances) {
  absl::StatusOr<ClusterResource> c =
      ConvertCluster(TlsCluster(kIstioContext), TestProviders());
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_NE(c->tls, nullptr);
  const EndpointTls& tls = *c->tls;
  EXPECT_EQ(tls.certificates.cert_chain_file, "/certs/cert.pem");
  EXPECT_EQ(tls.certificates.private_key_file, "/certs/key.pem");
  EXPECT_EQ(tls.certificates.trust_roots_file, "/certs/ca.pem");
  EXPECT_EQ(tls.certificates.refresh_interval, absl::Seconds(30));
  ASSERT_EQ(tls.server_names.size(), 2u);
  EXPECT_EQ(tls.server_names[0].kind, ServerNameMatcher::Kind::kExact);
  EXPECT_EQ(tls.server_names[0].value, "spiffe://cluster.local/ns/a/sa/b");
  EXPECT_EQ(tls.server_names[1].kind, ServerNameMatcher::Kind::kPrefix);
  EXPECT_EQ(tls.server_names[1].value, "spiffe://cluster.local/ns/c/");
  EXPECT_EQ(tls.sni, "outbound_.7000_._.echo.a.svc.cluster.local");
  // The first exact matcher is the server_id label.
  EXPECT_EQ(c->tls_identity, "spiffe://cluster.local/ns/a/sa/b");
}

TEST(ConvertCluster, DnsClusterWithAnUpstreamTlsContext) {
  Cluster cluster =
      DnsCluster("LOGICAL_DNS", Locality(Host("echo.mesh.test", 7000)));
  *cluster.mutable_transport_socket() =
      TlsCluster(kIstioContext).transport_socket();
  absl::StatusOr<ClusterResource> c = ConvertCluster(cluster, TestProviders());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->discovery, ClusterResource::Discovery::kLogicalDns);
  ASSERT_NE(c->tls, nullptr);
  EXPECT_EQ(c->tls->certificates.trust_roots_file, "/certs/ca.pem");
  EXPECT_EQ(c->tls->sni, "outbound_.7000_._.echo.a.svc.cluster.local");
  EXPECT_EQ(c->tls_identity, "spiffe://cluster.local/ns/a/sa/b");
  // Its refusals as an EDS cluster's.
  cluster = DnsCluster("STRICT_DNS", Locality(Host("echo.mesh.test", 7000)));
  *cluster.mutable_transport_socket() =
      TlsCluster("common_tls_context {}").transport_socket();
  c = ConvertCluster(cluster, TestProviders());
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(),
              HasSubstr("transport_socket.typed_config.common_tls_context."
                        "validation_context: missing"));
}

TEST(ConvertCluster, TlsWithoutAClientCertificateAndWithTypedMatchers) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(
      TlsCluster(R"pb(
        common_tls_context {
          validation_context {
            ca_certificate_provider_instance { instance_name: "roots" }
            match_typed_subject_alt_names {
              san_type: DNS
              matcher { suffix: ".echo.svc" ignore_case: true }
            }
            match_typed_subject_alt_names {
              san_type: IP_ADDRESS
              matcher { exact: "10.0.0.1" }
            }
          }
        }
      )pb"),
      TestProviders());
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_NE(c->tls, nullptr);
  EXPECT_TRUE(c->tls->certificates.cert_chain_file.empty());
  EXPECT_TRUE(c->tls->certificates.private_key_file.empty());
  EXPECT_EQ(c->tls->certificates.trust_roots_file, "/roots/ca.pem");
  EXPECT_EQ(c->tls->certificates.refresh_interval, absl::Seconds(5));
  ASSERT_EQ(c->tls->server_names.size(), 2u);
  EXPECT_EQ(c->tls->server_names[0].san_type, ServerNameMatcher::SanType::kDns);
  EXPECT_TRUE(c->tls->server_names[0].ignore_case);
  EXPECT_EQ(c->tls->server_names[1].san_type, ServerNameMatcher::SanType::kIp);
  EXPECT_EQ(c->tls_identity, "10.0.0.1");
}

TEST(ConvertCluster, TlsContextRefusals) {
  const std::string ca =
      "ca_certificate_provider_instance { instance_name: \"default\" }";
  struct Case {
    std::string context;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"common_tls_context {}",
       "transport_socket.typed_config.common_tls_context.validation_context: "
       "missing"},
      {"common_tls_context { validation_context {} }",
       "validation_context.ca_certificate_provider_instance: missing"},
      {"common_tls_context { validation_context { "
       "ca_certificate_provider_instance { instance_name: \"nope\" } } }",
       "ca_certificate_provider_instance.instance_name: 'nope' is not a "
       "certificate provider of the bootstrap"},
      {"common_tls_context { validation_context { "
       "ca_certificate_provider_instance { instance_name: \"vault\" } } }",
       "'vault' is a 'vault' provider; mesh supports file_watcher"},
      {"common_tls_context { tls_certificate_provider_instance { "
       "instance_name: \"roots\" } validation_context { " +
           ca + " } }",
       "tls_certificate_provider_instance.instance_name: 'roots' has no "
       "certificate_file"},
      {"common_tls_context { tls_params {} validation_context { " + ca + " } }",
       "common_tls_context.tls_params: not supported"},
      {"common_tls_context { custom_handshaker {} validation_context { " + ca +
           " } }",
       "common_tls_context.custom_handshaker: not supported"},
      {"common_tls_context { tls_certificates {} validation_context { " + ca +
           " } }",
       "common_tls_context.tls_certificates: not supported"},
      {"common_tls_context { tls_certificate_sds_secret_configs { name: "
       "\"x\" } validation_context { " +
           ca + " } }",
       "tls_certificate_sds_secret_configs: not supported"},
      {"common_tls_context { tls_certificate_provider_instance { "
       "instance_name: \"default\" } "
       "tls_certificate_certificate_provider_instance { instance_name: "
       "\"roots\" } validation_context { " +
           ca + " } }",
       "tls_certificate_certificate_provider_instance: names instance 'roots' "
       "but tls_certificate_provider_instance names 'default'"},
      {"common_tls_context { combined_validation_context { "
       "validation_context_certificate_provider_instance { instance_name: "
       "\"roots\" } default_validation_context { " +
           ca + " } } }",
       "combined_validation_context.validation_context_certificate_provider_"
       "instance: names instance 'roots' but combined_validation_context."
       "default_validation_context.ca_certificate_provider_instance names "
       "'default'"},
      {"common_tls_context { validation_context_sds_secret_config {} }",
       "validation_context_sds_secret_config: not supported"},
      {"common_tls_context { combined_validation_context {} }",
       "combined_validation_context.default_validation_context."
       "ca_certificate_provider_instance: missing"},
      {"common_tls_context { validation_context { " + ca +
           " } } auto_sni_san_validation: true",
       "transport_socket.typed_config.auto_sni_san_validation: not supported"},
      {"common_tls_context { validation_context { " + ca +
           " verify_certificate_spki: \"x\" } }",
       "validation_context.verify_certificate_spki: not supported"},
      {"common_tls_context { validation_context { " + ca +
           " verify_certificate_hash: \"x\" } }",
       "verify_certificate_hash: not supported"},
      {"common_tls_context { validation_context { " + ca +
           " require_signed_certificate_timestamp {} } }",
       "require_signed_certificate_timestamp: not supported"},
      {"common_tls_context { validation_context { " + ca + " crl {} } }",
       "validation_context.crl: not supported"},
      {"common_tls_context { validation_context { " + ca +
           " custom_validator_config {} } }",
       "custom_validator_config: not supported"},
      {"common_tls_context { validation_context { " + ca +
           " match_subject_alt_names { safe_regex { regex: \"(\" } } } }",
       "match_subject_alt_names[0].safe_regex.regex: invalid RE2 '('"},
      {"common_tls_context { validation_context { " + ca +
           " match_subject_alt_names { exact: \"\" } } }",
       "match_subject_alt_names[0].match_pattern: exact matcher with an "
       "empty value"},
      {"common_tls_context { validation_context { " + ca +
           " match_subject_alt_names {} } }",
       "match_subject_alt_names[0].match_pattern: missing"},
      {"common_tls_context { validation_context { " + ca +
           " match_typed_subject_alt_names { san_type: OTHER_NAME matcher { "
           "exact: \"x\" } } } }",
       "match_typed_subject_alt_names[0].san_type: OTHER_NAME is not "
       "supported"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(TlsClusterError(c.context), HasSubstr(c.error)) << c.context;
  }
  // Another kind of transport socket.
  Cluster raw = EdsCluster("");
  raw.mutable_transport_socket()->set_name("envoy.transport_sockets.raw");
  raw.mutable_transport_socket()->mutable_typed_config()->set_type_url(
      "type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3."
      "RawBuffer");
  EXPECT_THAT(ClusterError(raw),
              HasSubstr("transport_socket.typed_config: envoy.extensions."
                        "transport_sockets.raw_buffer.v3.RawBuffer is not "
                        "supported"));
  // A name without a config.
  EXPECT_THAT(
      ClusterError(EdsCluster(
          "transport_socket { name: \"envoy.transport_sockets.tls\" }")),
      HasSubstr("transport_socket.typed_config: missing"));
  // An empty transport socket is plaintext.
  absl::StatusOr<ClusterResource> plain =
      ConvertCluster(EdsCluster("transport_socket {}"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->tls, nullptr);
  // Without the bootstrap's providers, Istio's context is refused.
  EXPECT_THAT(ClusterError(TlsCluster(kIstioContext)),
              HasSubstr("'default' is not a certificate provider"));
}

// What older istiod versions send: the deprecated provider-instance fields
// alone, or beside the current ones for older clients.
TEST(ConvertCluster, DeprecatedProviderInstanceFieldsAreRead) {
  absl::StatusOr<ClusterResource> alone = ConvertCluster(
      TlsCluster(R"pb(
        common_tls_context {
          tls_certificate_certificate_provider_instance {
            instance_name: "default"
            certificate_name: "default"
          }
          combined_validation_context {
            default_validation_context {
              match_subject_alt_names { exact: "spiffe://td/ns/a/sa/b" }
            }
            validation_context_certificate_provider_instance {
              instance_name: "roots"
              certificate_name: "ROOTCA"
            }
          }
        }
      )pb"),
      TestProviders());
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(alone->tls->certificates.cert_chain_file, "/certs/cert.pem");
  EXPECT_EQ(alone->tls->certificates.trust_roots_file, "/roots/ca.pem");
  ASSERT_EQ(alone->tls->server_names.size(), 1u);
  EXPECT_EQ(alone->tls->server_names[0].value, "spiffe://td/ns/a/sa/b");

  absl::StatusOr<ClusterResource> both = ConvertCluster(
      TlsCluster(R"pb(
        common_tls_context {
          tls_certificate_provider_instance { instance_name: "default" }
          tls_certificate_certificate_provider_instance {
            instance_name: "default"
          }
          combined_validation_context {
            default_validation_context {
              ca_certificate_provider_instance { instance_name: "default" }
            }
            validation_context_certificate_provider_instance {
              instance_name: "default"
            }
          }
        }
      )pb"),
      TestProviders());
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->tls->certificates.trust_roots_file, "/certs/ca.pem");

  // The oneof's deprecated member: roots only, no SAN check.
  absl::StatusOr<ClusterResource> roots =
      ConvertCluster(TlsCluster(R"pb(
                       common_tls_context {
                         validation_context_certificate_provider_instance {
                           instance_name: "roots"
                         }
                       }
                     )pb"),
                     TestProviders());
  ASSERT_TRUE(roots.ok()) << roots.status();
  EXPECT_EQ(roots->tls->certificates.trust_roots_file, "/roots/ca.pem");
  EXPECT_TRUE(roots->tls->server_names.empty());
}

// Envoy: with typed SAN matchers, the untyped ones are ignored (they would
// accept more).
TEST(ConvertCluster, TypedSanMatchersReplaceTheUntypedOnes) {
  absl::StatusOr<ClusterResource> c = ConvertCluster(
      TlsCluster(R"pb(
        common_tls_context {
          validation_context {
            ca_certificate_provider_instance { instance_name: "default" }
            match_subject_alt_names { prefix: "spiffe://" }
            match_typed_subject_alt_names {
              san_type: URI
              matcher { exact: "spiffe://td/ns/a/sa/b" }
            }
          }
        }
      )pb"),
      TestProviders());
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->tls->server_names.size(), 1u);
  EXPECT_EQ(c->tls->server_names[0].kind, ServerNameMatcher::Kind::kExact);
  EXPECT_EQ(c->tls->server_names[0].san_type, ServerNameMatcher::SanType::kUri);
}

TEST(ConvertCluster, TooManySanMatchersAreRefused) {
  std::string context =
      "common_tls_context { validation_context { "
      "ca_certificate_provider_instance { instance_name: \"default\" } ";
  for (int i = 0; i < 1001; ++i) {
    absl::StrAppend(&context, "match_subject_alt_names { exact: \"n", i,
                    "\" } ");
  }
  absl::StrAppend(&context, "} }");
  EXPECT_THAT(TlsClusterError(context),
              HasSubstr("match_subject_alt_names: more than 1000 matchers"));
}

}  // namespace
}  // namespace mesh::internal::xds
