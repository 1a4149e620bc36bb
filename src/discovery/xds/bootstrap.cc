#include "src/discovery/xds/bootstrap.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/json_util.h"
#include "src/base/json_shape.h"
#include "src/base/utf8.h"
#include "src/model/address.h"

namespace mesh::internal::xds {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

// A bootstrap is a few KiB. The bound keeps a wrong file (a log, a core dump)
// from costing memory and parse time before it is refused anyway.
constexpr size_t kMaxBootstrapBytes = 1 << 20;
// gRPC's and Istio's bootstraps nest 5 deep. Protobuf's JSON reader costs
// time quadratic in nesting (20,000 '[' once cost 11.8 s of CPU), so deeper
// text is refused by a linear walk before it is parsed. (The reader itself
// refuses lists nested past about 47, with a vaguer message.)
constexpr int kMaxBootstrapDepth = 32;

constexpr char kNoneGiven[] =
    "no xDS bootstrap: set XdsOptions::bootstrap_json or bootstrap_path, or "
    "GRPC_XDS_BOOTSTRAP / GRPC_XDS_BOOTSTRAP_CONFIG";

// Protobuf's JSON errors quote the text around the fault on a second line
// and point at it with a caret on a third: kept on one line, the quote
// printable (bytes escaped), so that a log line is one line.
std::string OneLine(absl::string_view message) {
  std::vector<absl::string_view> lines = absl::StrSplit(message, '\n');
  if (lines.size() < 2) return PrintableText(message);
  return absl::StrCat(PrintableText(lines[0]), " (near '",
                      PrintableText(lines[1]), "')");
}

absl::Status Invalid(absl::string_view path, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", problem));
}

const char* KindName(const Value& value) {
  switch (value.kind_case()) {
    case Value::kNullValue:
      return "null";
    case Value::kNumberValue:
      return "a number";
    case Value::kStringValue:
      return "a string";
    case Value::kBoolValue:
      return "a bool";
    case Value::kStructValue:
      return "an object";
    case Value::kListValue:
      return "a list";
    case Value::KIND_NOT_SET:
      break;
  }
  return "nothing";
}

absl::Status WrongType(absl::string_view path, absl::string_view want,
                       const Value& got) {
  return Invalid(path,
                 absl::StrCat("must be ", want, " (got ", KindName(got), ")"));
}

std::string Element(absl::string_view list_path, int index) {
  return absl::StrCat(list_path, "[", index, "]");
}

// One JSON object and its path from the root, so that every error names its
// field ("xds_servers[0].channel_creds"). Like gRPC, unknown keys are
// ignored; a known key of the wrong type is an error, null included.
class JsonObject {
 public:
  JsonObject(const Struct& fields, std::string path)
      : fields_(&fields), path_(std::move(path)) {}

  static absl::StatusOr<JsonObject> Of(const Value& value, std::string path) {
    if (value.kind_case() != Value::kStructValue) {
      return WrongType(path, "an object", value);
    }
    return JsonObject(value.struct_value(), std::move(path));
  }

  const Struct& fields() const { return *fields_; }

  // Keys are the file's text: quoted printable and short.
  std::string PathOf(absl::string_view key) const {
    return path_.empty() ? QuotedText(key)
                         : absl::StrCat(path_, ".", QuotedText(key));
  }

  const Value* Find(absl::string_view key) const {
    auto it = fields_->fields().find(std::string(key));
    return it == fields_->fields().end() ? nullptr : &it->second;
  }

  // Absent leaves *out unchanged.
  absl::Status OptionalString(absl::string_view key, std::string* out) const {
    const Value* value = Find(key);
    if (value == nullptr) return absl::OkStatus();
    if (value->kind_case() != Value::kStringValue) {
      return WrongType(PathOf(key), "a string", *value);
    }
    *out = value->string_value();
    return absl::OkStatus();
  }

  absl::Status RequiredString(absl::string_view key, std::string* out) const {
    if (Find(key) == nullptr) return Invalid(PathOf(key), "missing");
    return OptionalString(key, out);
  }

  // Absent reads as {}: for every optional object here, absent and empty
  // mean the same.
  absl::StatusOr<JsonObject> ObjectOrEmpty(absl::string_view key) const {
    const Value* value = Find(key);
    if (value == nullptr) {
      return JsonObject(Struct::default_instance(), PathOf(key));
    }
    return Of(*value, PathOf(key));
  }

  // Absent reads as [].
  absl::StatusOr<const ListValue*> ListOrEmpty(absl::string_view key) const {
    const Value* value = Find(key);
    if (value == nullptr) return &ListValue::default_instance();
    if (value->kind_case() != Value::kListValue) {
      return WrongType(PathOf(key), "a list", *value);
    }
    return &value->list_value();
  }

  absl::StatusOr<const ListValue*> NonEmptyList(absl::string_view key) const {
    const Value* value = Find(key);
    if (value == nullptr) return Invalid(PathOf(key), "missing");
    if (value->kind_case() != Value::kListValue) {
      return WrongType(PathOf(key), "a non-empty list", *value);
    }
    if (value->list_value().values().empty()) {
      return Invalid(PathOf(key), "must be a non-empty list");
    }
    return &value->list_value();
  }

 private:
  const Struct* fields_;
  std::string path_;
};

// The optional "config" object as JSON text, kept for whoever interprets it.
absl::StatusOr<std::string> ConfigJson(const JsonObject& parent) {
  absl::StatusOr<JsonObject> config = parent.ObjectOrEmpty("config");
  if (!config.ok()) return config.status();
  std::string json;
  google::protobuf::util::Status printed =
      google::protobuf::util::MessageToJsonString(config->fields(), &json);
  if (!printed.ok()) {
    return Invalid(parent.PathOf("config"),
                   absl::StrCat("cannot be printed as JSON: ",
                                printed.message().ToString()));
  }
  return json;
}

// gRPC's JSON duration: decimal seconds with an "s" ("600s", "1.5s").
absl::StatusOr<absl::Duration> ParseJsonDuration(const std::string& text,
                                                 const std::string& path) {
  double seconds = 0;
  if (text.size() < 2 || text.back() != 's' ||
      !absl::SimpleAtod(absl::string_view(text).substr(0, text.size() - 1),
                        &seconds) ||
      !(seconds > 0) || seconds > 365 * 24 * 3600.0) {
    return Invalid(path, absl::StrCat("'", QuotedText(text),
                                      "' is not a positive duration such as "
                                      "\"600s\""));
  }
  return absl::Seconds(seconds);
}

// The four fields of `entry`'s config (CertificateFiles), read as they
// are; the config object itself into `config`.
absl::Status ReadCertificateFiles(const JsonObject& entry,
                                  CertificateFiles* out,
                                  std::optional<JsonObject>* config) {
  absl::StatusOr<JsonObject> c = entry.ObjectOrEmpty("config");
  if (!c.ok()) return c.status();
  std::string refresh;
  for (absl::Status s :
       {c->OptionalString("ca_certificate_file", &out->ca_certificate_file),
        c->OptionalString("certificate_file", &out->certificate_file),
        c->OptionalString("private_key_file", &out->private_key_file),
        c->OptionalString("refresh_interval", &refresh)}) {
    if (!s.ok()) return s;
  }
  if (!refresh.empty()) {
    absl::StatusOr<absl::Duration> d =
        ParseJsonDuration(refresh, c->PathOf("refresh_interval"));
    if (!d.ok()) return d.status();
    out->refresh_interval = *d;
  }
  if (out->certificate_file.empty() != out->private_key_file.empty()) {
    return Invalid(
        c->PathOf(out->certificate_file.empty() ? "certificate_file"
                                                : "private_key_file"),
        "missing: certificate_file and private_key_file go together");
  }
  config->emplace(*std::move(c));
  return absl::OkStatus();
}

// The config of channel_creds type "tls" (gRFC A65's fields).
absl::Status ParseTlsCreds(const JsonObject& entry, XdsServerTls* out) {
  std::optional<JsonObject> config;
  if (absl::Status s = ReadCertificateFiles(entry, out, &config); !s.ok()) {
    return s;
  }
  if (out->ca_certificate_file.empty()) {
    return Invalid(config->PathOf("ca_certificate_file"),
                   "missing (mesh verifies the xDS server against these CA "
                   "certificates; it does not use the system's roots)");
  }
  return absl::OkStatus();
}

// gRPC lists credentials in order of preference and uses the first it
// supports; so does mesh. Every entry is still checked, as gRPC does.
absl::Status ParseChannelCreds(const JsonObject& server, XdsServer* out) {
  absl::StatusOr<const ListValue*> creds = server.NonEmptyList("channel_creds");
  if (!creds.ok()) return creds.status();
  const std::string path = server.PathOf("channel_creds");
  std::vector<std::string> types;
  bool chosen = false;
  for (int i = 0; i < (*creds)->values_size(); ++i) {
    absl::StatusOr<JsonObject> entry =
        JsonObject::Of((*creds)->values(i), Element(path, i));
    if (!entry.ok()) return entry.status();
    std::string type;
    if (absl::Status s = entry->RequiredString("type", &type); !s.ok()) {
      return s;
    }
    absl::StatusOr<std::string> config = ConfigJson(*entry);
    if (!config.ok()) return config.status();
    if (!chosen && (type == "insecure" || type == "tls")) {
      if (type == "tls") {
        if (absl::Status s = ParseTlsCreds(*entry, &out->tls); !s.ok()) {
          return s;
        }
      }
      out->channel_creds_type = type;
      out->channel_creds_config_json = *std::move(config);
      chosen = true;
    }
    types.push_back(std::move(type));
  }
  if (!chosen) {
    return Invalid(path, absl::StrCat("no supported type (got: ",
                                      QuotedText(absl::StrJoin(types, ", ")),
                                      "); mesh supports insecure and tls"));
  }
  return absl::OkStatus();
}

absl::StatusOr<XdsServer> ParseServer(const Value& value, std::string path) {
  absl::StatusOr<JsonObject> server = JsonObject::Of(value, std::move(path));
  if (!server.ok()) return server.status();
  XdsServer out;
  if (absl::Status s = server->RequiredString("server_uri", &out.server_uri);
      !s.ok()) {
    return s;
  }
  if (out.server_uri.empty()) {
    return Invalid(server->PathOf("server_uri"), "must not be empty");
  }
  if (absl::Status s = ValidateServerAddress(out.server_uri); !s.ok()) {
    return Invalid(server->PathOf("server_uri"), s.message());
  }
  if (absl::Status s = ParseChannelCreds(*server, &out); !s.ok()) return s;
  absl::StatusOr<const ListValue*> features =
      server->ListOrEmpty("server_features");
  if (!features.ok()) return features.status();
  for (int i = 0; i < (*features)->values_size(); ++i) {
    const Value& feature = (*features)->values(i);
    if (feature.kind_case() != Value::kStringValue) {
      return WrongType(Element(server->PathOf("server_features"), i),
                       "a string", feature);
    }
    // Features gRPC knows and mesh does not (e.g. "trusted_xds_server") only
    // relax or tighten checks mesh does not make.
    if (feature.string_value() == "xds_v3") out.xds_v3 = true;
    if (feature.string_value() == "ignore_resource_deletion") {
      out.ignore_resource_deletion = true;
    }
  }
  return out;
}

absl::Status ParseNode(const JsonObject& root, XdsNode* out) {
  absl::StatusOr<JsonObject> node = root.ObjectOrEmpty("node");
  if (!node.ok()) return node.status();
  absl::StatusOr<JsonObject> locality = node->ObjectOrEmpty("locality");
  if (!locality.ok()) return locality.status();
  absl::StatusOr<JsonObject> metadata = node->ObjectOrEmpty("metadata");
  if (!metadata.ok()) return metadata.status();
  for (absl::Status s :
       {node->OptionalString("id", &out->id),
        node->OptionalString("cluster", &out->cluster),
        locality->OptionalString("region", &out->region),
        locality->OptionalString("zone", &out->zone),
        locality->OptionalString("sub_zone", &out->sub_zone)}) {
    if (!s.ok()) return s;
  }
  out->metadata = metadata->fields();
  return absl::OkStatus();
}

// The config of a "file_watcher" certificate provider.
absl::Status ParseFileWatcher(const JsonObject& entry, FileWatcherConfig* out) {
  std::optional<JsonObject> config;
  if (absl::Status s = ReadCertificateFiles(entry, out, &config); !s.ok()) {
    return s;
  }
  if (out->certificate_file.empty() && out->ca_certificate_file.empty()) {
    return Invalid(config->PathOf("certificate_file"),
                   "missing: a file_watcher needs certificate_file and "
                   "private_key_file, ca_certificate_file, or all three");
  }
  return absl::OkStatus();
}

absl::Status ParseCertificateProviders(
    const JsonObject& root, std::map<std::string, CertificateProvider>* out) {
  absl::StatusOr<JsonObject> providers =
      root.ObjectOrEmpty("certificate_providers");
  if (!providers.ok()) return providers.status();
  // Sorted, so that of several bad entries the same one is always reported.
  std::map<std::string, const Value*> sorted;
  for (const auto& [name, value] : providers->fields().fields()) {
    sorted.emplace(name, &value);
  }
  for (const auto& [name, value] : sorted) {
    absl::StatusOr<JsonObject> entry =
        JsonObject::Of(*value, providers->PathOf(name));
    if (!entry.ok()) return entry.status();
    CertificateProvider provider;
    if (absl::Status s =
            entry->RequiredString("plugin_name", &provider.plugin_name);
        !s.ok()) {
      return s;
    }
    absl::StatusOr<std::string> config = ConfigJson(*entry);
    if (!config.ok()) return config.status();
    provider.config_json = *std::move(config);
    if (provider.plugin_name == "file_watcher") {
      FileWatcherConfig watcher;
      if (absl::Status s = ParseFileWatcher(*entry, &watcher); !s.ok()) {
        return s;
      }
      provider.file_watcher = std::move(watcher);
    }
    out->emplace(name, std::move(provider));
  }
  return absl::OkStatus();
}

absl::Status WithSource(absl::string_view source, const absl::Status& status) {
  return absl::InvalidArgumentError(
      absl::StrCat(source, ": ", status.message()));
}

absl::StatusOr<XdsBootstrap> ParseFrom(absl::string_view source,
                                       absl::string_view json) {
  absl::StatusOr<XdsBootstrap> bootstrap = ParseXdsBootstrap(json);
  if (!bootstrap.ok()) return WithSource(source, bootstrap.status());
  return bootstrap;
}

// Reads at most one byte past the limit, so that an oversized file is
// refused by ParseXdsBootstrap without being read whole.
absl::StatusOr<std::string> ReadBounded(absl::string_view source,
                                        const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"),
                                             &std::fclose);
  if (file == nullptr) {
    return Invalid(source, absl::StrCat("cannot read: ", std::strerror(errno)));
  }
  std::string text(kMaxBootstrapBytes + 1, '\0');
  size_t n = std::fread(text.data(), 1, text.size(), file.get());
  if (std::ferror(file.get())) {
    return Invalid(source, absl::StrCat("cannot read: ", std::strerror(errno)));
  }
  text.resize(n);
  return text;
}

absl::StatusOr<XdsBootstrap> LoadFile(absl::string_view source,
                                      const std::string& path) {
  absl::StatusOr<std::string> text = ReadBounded(source, path);
  if (!text.ok()) return text.status();
  return ParseFrom(source, *text);
}

}  // namespace

absl::StatusOr<XdsBootstrap> ParseXdsBootstrap(absl::string_view json) {
  if (json.size() > kMaxBootstrapBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("bootstrap is over the limit of 1 MiB (",
                     kMaxBootstrapBytes, " bytes)"));
  }
  if (absl::Status s = CheckJsonShape(json, {kMaxBootstrapDepth}); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("bootstrap is refused: ", s.message()));
  }
  // Parsed as a Value, not a Struct, so that a top level that is valid JSON
  // but not an object gets its own error.
  Value root;
  google::protobuf::util::Status parsed =
      google::protobuf::util::JsonStringToMessage(
          google::protobuf::StringPiece(json.data(), json.size()), &root);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bootstrap is not valid JSON: ", OneLine(parsed.message().ToString())));
  }
  if (root.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bootstrap must be a JSON object (got ", KindName(root), ")"));
  }
  JsonObject top(root.struct_value(), "");
  XdsBootstrap out;
  absl::StatusOr<const ListValue*> servers = top.NonEmptyList("xds_servers");
  if (!servers.ok()) return servers.status();
  for (int i = 0; i < (*servers)->values_size(); ++i) {
    absl::StatusOr<XdsServer> server =
        ParseServer((*servers)->values(i), Element("xds_servers", i));
    if (!server.ok()) return server.status();
    out.servers.push_back(*std::move(server));
  }
  if (absl::Status s = ParseNode(top, &out.node); !s.ok()) return s;
  if (absl::Status s =
          ParseCertificateProviders(top, &out.certificate_providers);
      !s.ok()) {
    return s;
  }
  return out;
}

absl::StatusOr<XdsBootstrap> LoadXdsBootstrap(const std::string& json,
                                              const std::string& path) {
  if (!json.empty()) return ParseFrom("XdsOptions::bootstrap_json", json);
  if (!path.empty()) {
    return LoadFile(absl::StrCat("bootstrap file ", path), path);
  }
  // gRPC's own order (gRFC A27): the file first, then the inline JSON. An
  // empty variable counts as unset.
  const char* env_path = std::getenv("GRPC_XDS_BOOTSTRAP");
  if (env_path != nullptr && *env_path != '\0') {
    return LoadFile(absl::StrCat("GRPC_XDS_BOOTSTRAP=", env_path), env_path);
  }
  const char* env_json = std::getenv("GRPC_XDS_BOOTSTRAP_CONFIG");
  if (env_json != nullptr && *env_json != '\0') {
    return ParseFrom("GRPC_XDS_BOOTSTRAP_CONFIG", env_json);
  }
  return absl::InvalidArgumentError(kNoneGiven);
}

}  // namespace mesh::internal::xds
