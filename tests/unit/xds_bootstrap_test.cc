// The xDS bootstrap parser: the JSON file gRPC's xDS client reads (gRFC A27),
// every field and every error, and where LoadXdsBootstrap looks for it.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/discovery/xds/bootstrap.h"

namespace mesh::internal::xds {
namespace {

using ::testing::HasSubstr;

// What the Istio agent writes for a proxyless gRPC workload.
constexpr char kIstioBootstrap[] = R"json({
  "xds_servers": [{
    "server_uri": "unix:///etc/istio/proxy/XDS",
    "channel_creds": [{"type": "insecure"}],
    "server_features": ["xds_v3", "ignore_resource_deletion"]
  }],
  "node": {
    "id": "sidecar~10.0.0.1~pod.ns~ns.svc.cluster.local",
    "cluster": "books.ns",
    "locality": {"region": "eu-west1", "zone": "eu-west1-b",
                 "sub_zone": "rack7"},
    "metadata": {"GENERATOR": "grpc", "INSTANCE_IPS": "10.0.0.1",
                 "LABELS": {"app": "books"}}
  },
  "certificate_providers": {
    "default": {
      "plugin_name": "file_watcher",
      "config": {
        "certificate_file": "/var/lib/istio/data/cert-chain.pem",
        "private_key_file": "/var/lib/istio/data/key.pem",
        "ca_certificate_file": "/var/lib/istio/data/root-cert.pem",
        "refresh_interval": "900s"
      }
    }
  },
  "server_listener_resource_name_template":
      "xds.istio.io/grpc/lds/inbound/%s"
})json";

// The smallest valid bootstrap, with `server` as its only xds_servers entry.
std::string WithServer(const std::string& server) {
  return absl::StrCat(R"({"xds_servers": [)", server, "]}");
}

// The smallest valid bootstrap, for the server at `uri`.
std::string WithUri(const std::string& uri) {
  return WithServer(
      absl::StrCat(R"({"server_uri": ")", uri,
                   R"(", "channel_creds": [{"type": "insecure"}]})"));
}

// The smallest valid bootstrap plus one more top-level key.
std::string WithTopLevel(const std::string& key_and_value) {
  return absl::StrCat(
      R"({"xds_servers": [{"server_uri": "cp:15010",
                            "channel_creds": [{"type": "insecure"}]}], )",
      key_and_value, "}");
}

std::string ErrorOf(absl::string_view json) {
  absl::StatusOr<XdsBootstrap> b = ParseXdsBootstrap(json);
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(b.status().message());
}

// Sets (or, with nullopt, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    Set(value);
  }
  ~ScopedEnv() { Set(old_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void Set(const std::optional<std::string>& value) {
    if (value) {
      setenv(name_, value->c_str(), /*overwrite=*/1);
    } else {
      unsetenv(name_);
    }
  }
  const char* name_;
  std::optional<std::string> old_;
};

// Neither variable set, whatever the environment the test runs in.
struct NoBootstrapEnv {
  ScopedEnv path{"GRPC_XDS_BOOTSTRAP", std::nullopt};
  ScopedEnv config{"GRPC_XDS_BOOTSTRAP_CONFIG", std::nullopt};
};

// A file under testing::TempDir(), removed at the end of the scope.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text)
      : path_(absl::StrCat(testing::TempDir(), "xds_bootstrap_test_", getpid(),
                           "_", name, ".json")) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(ParseXdsBootstrapTest, IstioAgentBootstrapParsedWhole) {
  absl::StatusOr<XdsBootstrap> b = ParseXdsBootstrap(kIstioBootstrap);
  ASSERT_TRUE(b.ok()) << b.status();

  ASSERT_EQ(b->servers.size(), 1u);
  const XdsServer& server = b->servers[0];
  EXPECT_EQ(server.server_uri, "unix:///etc/istio/proxy/XDS");
  EXPECT_EQ(server.channel_creds_type, "insecure");
  EXPECT_EQ(server.channel_creds_config_json, "{}");
  EXPECT_TRUE(server.xds_v3);
  EXPECT_TRUE(server.ignore_resource_deletion);

  const XdsNode& node = b->node;
  EXPECT_EQ(node.id, "sidecar~10.0.0.1~pod.ns~ns.svc.cluster.local");
  EXPECT_EQ(node.cluster, "books.ns");
  EXPECT_EQ(node.region, "eu-west1");
  EXPECT_EQ(node.zone, "eu-west1-b");
  EXPECT_EQ(node.sub_zone, "rack7");
  ASSERT_EQ(node.metadata.fields().count("GENERATOR"), 1u);
  EXPECT_EQ(node.metadata.fields().at("GENERATOR").string_value(), "grpc");
  EXPECT_EQ(node.metadata.fields().at("INSTANCE_IPS").string_value(),
            "10.0.0.1");
  EXPECT_EQ(node.metadata.fields()
                .at("LABELS")
                .struct_value()
                .fields()
                .at("app")
                .string_value(),
            "books");

  ASSERT_EQ(b->certificate_providers.size(), 1u);
  const CertificateProvider& provider = b->certificate_providers.at("default");
  EXPECT_EQ(provider.plugin_name, "file_watcher");
  EXPECT_THAT(
      provider.config_json,
      HasSubstr(R"("certificate_file":"/var/lib/istio/data/cert-chain.pem")"));
  EXPECT_THAT(provider.config_json,
              HasSubstr(R"("private_key_file":"/var/lib/istio/data/key.pem")"));
  EXPECT_THAT(
      provider.config_json,
      HasSubstr(
          R"("ca_certificate_file":"/var/lib/istio/data/root-cert.pem")"));
  EXPECT_THAT(provider.config_json, HasSubstr(R"("refresh_interval":"900s")"));
  ASSERT_TRUE(provider.file_watcher.has_value());
  EXPECT_EQ(provider.file_watcher->certificate_file,
            "/var/lib/istio/data/cert-chain.pem");
  EXPECT_EQ(provider.file_watcher->private_key_file,
            "/var/lib/istio/data/key.pem");
  EXPECT_EQ(provider.file_watcher->ca_certificate_file,
            "/var/lib/istio/data/root-cert.pem");
  EXPECT_EQ(provider.file_watcher->refresh_interval, absl::Seconds(900));
}

// The smallest valid bootstrap with one certificate provider `entry`.
std::string WithProvider(const std::string& entry) {
  return absl::StrCat(
      R"({"xds_servers": [{"server_uri": "cp:1", "channel_creds": )",
      R"([{"type": "insecure"}]}], "certificate_providers": {"p": )", entry,
      "}}");
}

TEST(ParseXdsBootstrapTest, FileWatcherProviders) {
  // Roots only, gRPC's default refresh.
  absl::StatusOr<XdsBootstrap> b = ParseXdsBootstrap(
      WithProvider(R"({"plugin_name": "file_watcher", "config": )"
                   R"({"ca_certificate_file": "/ca.pem"}})"));
  ASSERT_TRUE(b.ok()) << b.status();
  const CertificateProvider& p = b->certificate_providers.at("p");
  ASSERT_TRUE(p.file_watcher.has_value());
  EXPECT_EQ(p.file_watcher->ca_certificate_file, "/ca.pem");
  EXPECT_TRUE(p.file_watcher->certificate_file.empty());
  EXPECT_EQ(p.file_watcher->refresh_interval, absl::Minutes(10));
  // Another plugin is kept, unchecked, without a file_watcher config.
  b = ParseXdsBootstrap(
      WithProvider(R"({"plugin_name": "vault", "config": {"x": 1}})"));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(b->certificate_providers.at("p").file_watcher.has_value());
}

TEST(ParseXdsBootstrapTest, FileWatcherRefusals) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"certificate_file": "/c.pem"})",
       "certificate_providers.p.config.private_key_file: missing: "
       "certificate_file and private_key_file go together"},
      {R"({"private_key_file": "/k.pem", "ca_certificate_file": "/ca.pem"})",
       "certificate_providers.p.config.certificate_file: missing"},
      {R"({})",
       "a file_watcher needs certificate_file and private_key_file, "
       "ca_certificate_file, or all three"},
      {R"({"ca_certificate_file": "/ca.pem", "refresh_interval": "soon"})",
       "certificate_providers.p.config.refresh_interval: 'soon' is not a "
       "positive duration"},
      {R"({"ca_certificate_file": 7})",
       "certificate_providers.p.config.ca_certificate_file"},
  };
  for (const auto& [config, error] : cases) {
    absl::StatusOr<XdsBootstrap> b =
        ParseXdsBootstrap(WithProvider(absl::StrCat(
            R"({"plugin_name": "file_watcher", "config": )", config, "}")));
    ASSERT_FALSE(b.ok()) << config;
    EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(b.status().message(), HasSubstr(error)) << config;
  }
}

TEST(ParseXdsBootstrapTest, OptionalPartsAbsentLeaveDefaults) {
  absl::StatusOr<XdsBootstrap> b = ParseXdsBootstrap(WithServer(
      R"({"server_uri": "cp:15010", "channel_creds": [{"type": "insecure"}]})"));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(b->servers[0].xds_v3);
  EXPECT_FALSE(b->servers[0].ignore_resource_deletion);
  EXPECT_EQ(b->node.id, "");
  EXPECT_EQ(b->node.zone, "");
  EXPECT_TRUE(b->node.metadata.fields().empty());
  EXPECT_TRUE(b->certificate_providers.empty());
}

TEST(ParseXdsBootstrapTest, AllServersKeptInOrder) {
  absl::StatusOr<XdsBootstrap> b = ParseXdsBootstrap(R"({"xds_servers": [
      {"server_uri": "a:1", "channel_creds": [{"type": "insecure"}]},
      {"server_uri": "b:2", "channel_creds": [{"type": "insecure"}]}]})");
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(b->servers.size(), 2u);
  EXPECT_EQ(b->servers[0].server_uri, "a:1");
  EXPECT_EQ(b->servers[1].server_uri, "b:2");
}

TEST(ParseXdsBootstrapTest, FirstSupportedChannelCredsChosen) {
  absl::StatusOr<XdsBootstrap> b = ParseXdsBootstrap(WithServer(R"({
      "server_uri": "istiod.istio-system.svc:15012",
      "channel_creds": [{"type": "google_default"},
                        {"type": "insecure", "config": {"note": "first"}},
                        {"type": "tls", "config": {"x": 1}},
                        {"type": "insecure", "config": {"note": "second"}}]})"));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->servers[0].channel_creds_type, "insecure");
  EXPECT_EQ(b->servers[0].channel_creds_config_json, R"({"note":"first"})");
}

TEST(ParseXdsBootstrapTest, TlsChannelCredsReadTheirFiles) {
  absl::StatusOr<XdsBootstrap> b = ParseXdsBootstrap(WithServer(R"({
      "server_uri": "istiod.istio-system.svc:15012",
      "channel_creds": [{"type": "tls", "config": {
          "ca_certificate_file": "/etc/certs/root-cert.pem",
          "certificate_file": "/etc/certs/cert-chain.pem",
          "private_key_file": "/etc/certs/key.pem",
          "refresh_interval": "1.5s"}}]})"));
  ASSERT_TRUE(b.ok()) << b.status();
  const XdsServer& server = b->servers[0];
  EXPECT_EQ(server.channel_creds_type, "tls");
  EXPECT_EQ(server.tls.ca_certificate_file, "/etc/certs/root-cert.pem");
  EXPECT_EQ(server.tls.certificate_file, "/etc/certs/cert-chain.pem");
  EXPECT_EQ(server.tls.private_key_file, "/etc/certs/key.pem");
  EXPECT_EQ(server.tls.refresh_interval, absl::Milliseconds(1500));
  // Without a refresh interval: gRPC's ten minutes; without a client
  // certificate: TLS that only checks the server.
  b = ParseXdsBootstrap(WithServer(R"({"server_uri": "cp:15012",
      "channel_creds": [{"type": "tls", "config": {
          "ca_certificate_file": "/etc/certs/root-cert.pem"}}]})"));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->servers[0].tls.refresh_interval, absl::Minutes(10));
  EXPECT_TRUE(b->servers[0].tls.certificate_file.empty());
}

TEST(ParseXdsBootstrapTest, BadTlsChannelCredsAreNamed) {
  EXPECT_THAT(ErrorOf(WithServer(R"({"server_uri": "cp:15012",
      "channel_creds": [{"type": "tls"}]})")),
              HasSubstr("xds_servers[0].channel_creds[0].config."
                        "ca_certificate_file: missing"));
  EXPECT_THAT(ErrorOf(WithServer(R"({"server_uri": "cp:15012",
      "channel_creds": [{"type": "tls", "config": {
          "ca_certificate_file": "ca.pem", "certificate_file": "c.pem"}}]})")),
              HasSubstr("config.private_key_file: missing"));
  EXPECT_THAT(ErrorOf(WithServer(R"({"server_uri": "cp:15012",
      "channel_creds": [{"type": "tls", "config": {
          "ca_certificate_file": "ca.pem", "refresh_interval": "10m"}}]})")),
              HasSubstr("config.refresh_interval: '10m' is not a positive "
                        "duration"));
}

TEST(ParseXdsBootstrapTest, ServerFeaturesUnknownIgnored) {
  absl::StatusOr<XdsBootstrap> b = ParseXdsBootstrap(WithServer(R"({
      "server_uri": "cp:15010", "channel_creds": [{"type": "insecure"}],
      "server_features": ["trusted_xds_server", "xds_v3"]})"));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(b->servers[0].xds_v3);
  EXPECT_FALSE(b->servers[0].ignore_resource_deletion);
}

TEST(ParseXdsBootstrapTest, UnknownKeysIgnored) {
  absl::StatusOr<XdsBootstrap> b = ParseXdsBootstrap(R"({
      "xds_servers": [{"server_uri": "cp:15010",
                       "channel_creds": [{"type": "insecure", "extra": 1}],
                       "future_server_key": {"a": [1, 2]}}],
      "node": {"id": "n1", "user_agent_name": "x",
               "locality": {"zone": "z", "planet": "earth"}},
      "certificate_providers": {"p": {"plugin_name": "file_watcher",
                                      "config": {"ca_certificate_file": "/ca",
                                                 "extra": 1},
                                      "extra": true}},
      "authorities": {"xds.example.com": {"xds_servers": []}},
      "client_default_listener_resource_name_template": "xdstp://%s",
      "server_listener_resource_name_template": "grpc/server?addr=%s",
      "some_future_key": null})");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->servers[0].server_uri, "cp:15010");
  EXPECT_EQ(b->node.id, "n1");
  EXPECT_EQ(b->node.zone, "z");
  EXPECT_EQ(b->certificate_providers.at("p").file_watcher->ca_certificate_file,
            "/ca");
}

TEST(ParseXdsBootstrapTest, XdsServersMissingNamed) {
  EXPECT_THAT(ErrorOf(R"({"node": {"id": "n"}})"),
              HasSubstr("xds_servers: missing"));
}

TEST(ParseXdsBootstrapTest, XdsServersEmptyNamed) {
  EXPECT_THAT(ErrorOf(R"({"xds_servers": []})"),
              HasSubstr("xds_servers: must be a non-empty list"));
}

TEST(ParseXdsBootstrapTest, XdsServersNotListNamed) {
  EXPECT_THAT(ErrorOf(R"({"xds_servers": {"server_uri": "cp:1"}})"),
              HasSubstr("xds_servers: must be a non-empty list (got an "
                        "object)"));
}

TEST(ParseXdsBootstrapTest, XdsServerNotObjectNamed) {
  EXPECT_THAT(ErrorOf(WithServer(R"("cp:15010")")),
              HasSubstr("xds_servers[0]: must be an object (got a string)"));
}

TEST(ParseXdsBootstrapTest, ServerUriMissingNamed) {
  EXPECT_THAT(
      ErrorOf(WithServer(R"({"channel_creds": [{"type": "insecure"}]})")),
      HasSubstr("xds_servers[0].server_uri: missing"));
}

TEST(ParseXdsBootstrapTest, ServerUriEmptyNamed) {
  EXPECT_THAT(
      ErrorOf(WithServer(
          R"({"server_uri": "", "channel_creds": [{"type": "insecure"}]})")),
      HasSubstr("xds_servers[0].server_uri: must not be empty"));
}

TEST(ParseXdsBootstrapTest, ServerUriNotStringNamed) {
  EXPECT_THAT(
      ErrorOf(WithServer(
          R"({"server_uri": 15010, "channel_creds": [{"type": "insecure"}]})")),
      HasSubstr("xds_servers[0].server_uri: must be a string (got a number)"));
}

TEST(ParseXdsBootstrapTest, SecondServerErrorNamesIndex) {
  EXPECT_THAT(ErrorOf(R"({"xds_servers": [
      {"server_uri": "a:1", "channel_creds": [{"type": "insecure"}]},
      {"channel_creds": [{"type": "insecure"}]}]})"),
              HasSubstr("xds_servers[1].server_uri: missing"));
}

TEST(ParseXdsBootstrapTest, ChannelCredsMissingNamed) {
  EXPECT_THAT(ErrorOf(WithServer(R"({"server_uri": "cp:15010"})")),
              HasSubstr("xds_servers[0].channel_creds: missing"));
}

TEST(ParseXdsBootstrapTest, ChannelCredsEmptyNamed) {
  EXPECT_THAT(
      ErrorOf(WithServer(R"({"server_uri": "cp:15010", "channel_creds": []})")),
      HasSubstr("xds_servers[0].channel_creds: must be a non-empty list"));
}

TEST(ParseXdsBootstrapTest, ChannelCredsEntryTypeMissingNamed) {
  EXPECT_THAT(ErrorOf(WithServer(R"({"server_uri": "cp:15010",
      "channel_creds": [{"type": "insecure"}, {"config": {}}]})")),
              HasSubstr("xds_servers[0].channel_creds[1].type: missing"));
}

TEST(ParseXdsBootstrapTest, ChannelCredsConfigNotObjectNamed) {
  EXPECT_THAT(ErrorOf(WithServer(R"({"server_uri": "cp:15010",
      "channel_creds": [{"type": "insecure", "config": "none"}]})")),
              HasSubstr("xds_servers[0].channel_creds[0].config: must be an "
                        "object"));
}

TEST(ParseXdsBootstrapTest, ChannelCredsNoneSupportedListsTypes) {
  EXPECT_THAT(ErrorOf(WithServer(R"({"server_uri": "cp:15010",
      "channel_creds": [{"type": "google_default"}, {"type": "fake"}]})")),
              HasSubstr("xds_servers[0].channel_creds: no supported type "
                        "(got: google_default, fake); mesh supports insecure "
                        "and tls"));
}

TEST(ParseXdsBootstrapTest, ServerFeatureNotStringNamed) {
  EXPECT_THAT(ErrorOf(WithServer(R"({"server_uri": "cp:15010",
      "channel_creds": [{"type": "insecure"}],
      "server_features": ["xds_v3", true]})")),
              HasSubstr("xds_servers[0].server_features[1]: must be a string "
                        "(got a bool)"));
}

TEST(ParseXdsBootstrapTest, NodeNotObjectNamed) {
  EXPECT_THAT(ErrorOf(WithTopLevel(R"("node": "sidecar~1")")),
              HasSubstr("node: must be an object (got a string)"));
}

TEST(ParseXdsBootstrapTest, NodeIdNotStringNamed) {
  EXPECT_THAT(ErrorOf(WithTopLevel(R"("node": {"id": ["a"]})")),
              HasSubstr("node.id: must be a string (got a list)"));
}

TEST(ParseXdsBootstrapTest, LocalityZoneNotStringNamed) {
  EXPECT_THAT(ErrorOf(WithTopLevel(R"("node": {"locality": {"zone": 3}})")),
              HasSubstr("node.locality.zone: must be a string"));
}

TEST(ParseXdsBootstrapTest, MetadataNotObjectNamed) {
  EXPECT_THAT(ErrorOf(WithTopLevel(R"("node": {"metadata": null})")),
              HasSubstr("node.metadata: must be an object (got null)"));
}

TEST(ParseXdsBootstrapTest, CertificateProvidersNotObjectNamed) {
  EXPECT_THAT(ErrorOf(WithTopLevel(R"("certificate_providers": [])")),
              HasSubstr("certificate_providers: must be an object"));
}

TEST(ParseXdsBootstrapTest, PluginNameMissingNamed) {
  EXPECT_THAT(ErrorOf(WithTopLevel(
                  R"("certificate_providers": {"foo": {"config": {}}})")),
              HasSubstr("certificate_providers.foo.plugin_name: missing"));
}

TEST(ParseXdsBootstrapTest, ProviderConfigNotObjectNamed) {
  EXPECT_THAT(ErrorOf(WithTopLevel(R"("certificate_providers": {
      "foo": {"plugin_name": "file_watcher", "config": 1}})")),
              HasSubstr("certificate_providers.foo.config: must be an object"));
}

TEST(ParseXdsBootstrapTest, NotJsonRefused) {
  EXPECT_THAT(ErrorOf(R"({"xds_servers": [)"),
              HasSubstr("bootstrap is not valid JSON: "));
}

TEST(ParseXdsBootstrapTest, EmptyTextRefusedAsNotJson) {
  EXPECT_THAT(ErrorOf(""), HasSubstr("bootstrap is not valid JSON: "));
}

TEST(ParseXdsBootstrapTest, TopLevelNotObjectRefused) {
  EXPECT_THAT(ErrorOf(R"([{"server_uri": "cp:15010"}])"),
              HasSubstr("bootstrap must be a JSON object (got a list)"));
  EXPECT_THAT(ErrorOf("42"),
              HasSubstr("bootstrap must be a JSON object (got a number)"));
}

TEST(ParseXdsBootstrapTest, OverOneMebibyteRefused) {
  std::string json = kIstioBootstrap;
  json.append((1 << 20) + 1 - json.size(), ' ');
  EXPECT_THAT(ErrorOf(json), HasSubstr("over the limit of 1 MiB"));
}

TEST(ParseXdsBootstrapTest, ExactlyOneMebibyteAccepted) {
  std::string json = kIstioBootstrap;
  json.append((1 << 20) - json.size(), ' ');
  EXPECT_TRUE(ParseXdsBootstrap(json).ok());
}

// Metadata holding arrays nested `depth` deep: with the root, node and
// metadata objects the document nests depth + 3.
std::string WithNestedMetadata(int depth) {
  return WithTopLevel(absl::StrCat(R"("node": {"metadata": {"deep": )",
                                   std::string(depth, '['),
                                   std::string(depth, ']'), "}}"));
}

TEST(ParseXdsBootstrapTest, NestingDeeperThan32IsRefusedBeforeParsing) {
  // 100,000 deep once cost protobuf's JSON reader minutes of CPU; the
  // linear walk refuses it at the 33rd bracket.
  const std::string deep =
      std::string(100'000, '[') + std::string(100'000, ']');
  EXPECT_EQ(ErrorOf(deep),
            "bootstrap is refused: arrays and objects nested deeper than 32 "
            "(at byte 32)");
  // The same inside an otherwise valid bootstrap: 32 in all passes, 33 not.
  EXPECT_TRUE(ParseXdsBootstrap(WithNestedMetadata(29)).ok());
  EXPECT_THAT(ErrorOf(WithNestedMetadata(30)),
              HasSubstr("nested deeper than 32"));
}

TEST(ParseXdsBootstrapTest, ABootstrapThatIsNotUtf8IsNamedOnOneLine) {
  std::string bad = WithTopLevel("\"node\": {\"id\": \"a\xff\nb\"}");
  std::string error = ErrorOf(bad);
  EXPECT_THAT(error, HasSubstr("bootstrap is refused: not valid UTF-8 "
                               "(byte \\xff at offset "));
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_EQ(error.find('\xff'), std::string::npos) << error;
}

TEST(ParseXdsBootstrapTest, TextFromTheFileInAnErrorIsOneLineAndShort) {
  // protobuf's JSON reader takes raw control bytes inside strings; the
  // fuzzer found a type holding a newline quoted raw.
  std::string error =
      ErrorOf(WithServer("{\"server_uri\": \"cp:1\", \"channel_creds\": "
                         "[{\"type\": \"tls\nx\"}]}"));
  EXPECT_THAT(error, HasSubstr("no supported type (got: tls\\x0ax)"));
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  // A key of 100,000 bytes in a path is quoted in 256 of them.
  error = ErrorOf(WithTopLevel(absl::StrCat(
      "\"certificate_providers\": {\"", std::string(100'000, 'k'), "\": 1}")));
  EXPECT_THAT(error, HasSubstr("... (100000 bytes): must be an object"));
  EXPECT_LT(error.size(), 1024u);
}

TEST(ParseXdsBootstrapTest, AJsonSyntaxErrorIsOneLineWithItsPlace) {
  std::string error = ErrorOf("{\"xds_servers\": [1,,2]}");
  EXPECT_THAT(error, HasSubstr("bootstrap is not valid JSON: "));
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

TEST(ParseXdsBootstrapTest, AServerUriGrpcWouldMisreadIsRefused) {
  // gRPC connects "127.0.0.1:99999" to port 34463.
  EXPECT_THAT(ErrorOf(WithUri("127.0.0.1:99999")),
              HasSubstr("xds_servers[0].server_uri: port of "
                        "'127.0.0.1:99999' must be 1..65535"));
  // A 900 KB host is refused, quoted in 256 bytes (gRPC logged it whole,
  // three times a reconnect).
  std::string error =
      ErrorOf(WithUri(absl::StrCat(std::string(900'000, 'h'), ":15010")));
  EXPECT_THAT(error, HasSubstr("neither an IP address nor a DNS name"));
  EXPECT_LT(error.size(), 700u);
  for (const char* good : {"cp:15010", "unix:///etc/istio/proxy/XDS",
                           "dns:///istiod.istio-system.svc:15012"}) {
    EXPECT_TRUE(ParseXdsBootstrap(WithUri(good)).ok()) << good;
  }
}

TEST(LoadXdsBootstrapTest, FromJson) {
  NoBootstrapEnv env;
  absl::StatusOr<XdsBootstrap> b = LoadXdsBootstrap(kIstioBootstrap, "");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->servers[0].server_uri, "unix:///etc/istio/proxy/XDS");
}

TEST(LoadXdsBootstrapTest, FromJsonErrorNamesSource) {
  NoBootstrapEnv env;
  absl::StatusOr<XdsBootstrap> b =
      LoadXdsBootstrap(R"({"xds_servers": []})", "");
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(),
              HasSubstr("XdsOptions::bootstrap_json: xds_servers: must be a "
                        "non-empty list"));
}

TEST(LoadXdsBootstrapTest, FromFile) {
  NoBootstrapEnv env;
  TempFile file("from_file", kIstioBootstrap);
  absl::StatusOr<XdsBootstrap> b = LoadXdsBootstrap("", file.path());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->node.id, "sidecar~10.0.0.1~pod.ns~ns.svc.cluster.local");
}

TEST(LoadXdsBootstrapTest, FromFileErrorNamesFileAndField) {
  NoBootstrapEnv env;
  TempFile file("bad_field",
                WithServer(R"({"channel_creds": [{"type": "insecure"}]})"));
  absl::StatusOr<XdsBootstrap> b = LoadXdsBootstrap("", file.path());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(),
              HasSubstr(absl::StrCat("bootstrap file ", file.path(),
                                     ": xds_servers[0].server_uri: missing")));
}

TEST(LoadXdsBootstrapTest, FileOverOneMebibyteRefused) {
  NoBootstrapEnv env;
  TempFile file("too_large", std::string(2 << 20, ' ') + kIstioBootstrap);
  absl::StatusOr<XdsBootstrap> b = LoadXdsBootstrap("", file.path());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(),
              HasSubstr(absl::StrCat("bootstrap file ", file.path(), ": ")));
  EXPECT_THAT(b.status().message(), HasSubstr("over the limit of 1 MiB"));
}

TEST(LoadXdsBootstrapTest, MissingFileNamesPath) {
  NoBootstrapEnv env;
  std::string path = absl::StrCat(testing::TempDir(), "no_such_bootstrap.json");
  absl::StatusOr<XdsBootstrap> b = LoadXdsBootstrap("", path);
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(),
              HasSubstr(absl::StrCat("bootstrap file ", path,
                                     ": cannot read: No such file or "
                                     "directory")));
}

TEST(LoadXdsBootstrapTest, FromGrpcXdsBootstrapEnv) {
  TempFile bootstrap("env_file", kIstioBootstrap);
  ScopedEnv file("GRPC_XDS_BOOTSTRAP", bootstrap.path());
  ScopedEnv config("GRPC_XDS_BOOTSTRAP_CONFIG", std::nullopt);
  absl::StatusOr<XdsBootstrap> b = LoadXdsBootstrap("", "");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->servers[0].server_uri, "unix:///etc/istio/proxy/XDS");
}

TEST(LoadXdsBootstrapTest, GrpcXdsBootstrapMissingFileNamesVariable) {
  ScopedEnv file("GRPC_XDS_BOOTSTRAP", "/nonexistent/bootstrap.json");
  ScopedEnv config("GRPC_XDS_BOOTSTRAP_CONFIG", std::nullopt);
  absl::StatusOr<XdsBootstrap> b = LoadXdsBootstrap("", "");
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(),
              HasSubstr("GRPC_XDS_BOOTSTRAP=/nonexistent/bootstrap.json: "
                        "cannot read: No such file or directory"));
}

TEST(LoadXdsBootstrapTest, FromGrpcXdsBootstrapConfigEnv) {
  ScopedEnv file("GRPC_XDS_BOOTSTRAP", std::nullopt);
  ScopedEnv config("GRPC_XDS_BOOTSTRAP_CONFIG", kIstioBootstrap);
  absl::StatusOr<XdsBootstrap> b = LoadXdsBootstrap("", "");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->node.metadata.fields().at("GENERATOR").string_value(), "grpc");
}

TEST(LoadXdsBootstrapTest, GrpcXdsBootstrapConfigErrorNamesVariable) {
  ScopedEnv file("GRPC_XDS_BOOTSTRAP", std::nullopt);
  ScopedEnv config("GRPC_XDS_BOOTSTRAP_CONFIG", "not json");
  absl::StatusOr<XdsBootstrap> b = LoadXdsBootstrap("", "");
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(b.status().message(),
              HasSubstr("GRPC_XDS_BOOTSTRAP_CONFIG: bootstrap is not valid "
                        "JSON"));
}

TEST(LoadXdsBootstrapTest, OrderJsonThenPathThenFileEnvThenConfigEnv) {
  TempFile env_file("order_env", WithUri("env-file:1"));
  TempFile arg_file("order_arg", WithUri("arg-file:1"));
  ScopedEnv file("GRPC_XDS_BOOTSTRAP", env_file.path());
  ScopedEnv config("GRPC_XDS_BOOTSTRAP_CONFIG", WithUri("env-json:1"));

  absl::StatusOr<XdsBootstrap> b =
      LoadXdsBootstrap(WithUri("arg-json:1"), arg_file.path());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->servers[0].server_uri, "arg-json:1");
  b = LoadXdsBootstrap("", arg_file.path());
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->servers[0].server_uri, "arg-file:1");
  b = LoadXdsBootstrap("", "");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->servers[0].server_uri, "env-file:1");
  ScopedEnv no_file("GRPC_XDS_BOOTSTRAP", std::nullopt);
  b = LoadXdsBootstrap("", "");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->servers[0].server_uri, "env-json:1");
}

TEST(LoadXdsBootstrapTest, NoneGivenRefused) {
  NoBootstrapEnv env;
  absl::StatusOr<XdsBootstrap> b = LoadXdsBootstrap("", "");
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      b.status().message(),
      "no xDS bootstrap: set XdsOptions::bootstrap_json or "
      "bootstrap_path, or GRPC_XDS_BOOTSTRAP / GRPC_XDS_BOOTSTRAP_CONFIG");
}

TEST(LoadXdsBootstrapTest, EmptyEnvCountsAsUnset) {
  ScopedEnv file("GRPC_XDS_BOOTSTRAP", "");
  ScopedEnv config("GRPC_XDS_BOOTSTRAP_CONFIG", "");
  absl::StatusOr<XdsBootstrap> b = LoadXdsBootstrap("", "");
  EXPECT_THAT(b.status().message(), HasSubstr("no xDS bootstrap"));
}

}  // namespace
}  // namespace mesh::internal::xds
