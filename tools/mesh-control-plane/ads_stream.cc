#include "tools/mesh-control-plane/ads_stream.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "src/base/utf8.h"

namespace mesh::controlplane {
namespace {

namespace discovery = ::envoy::service::discovery::v3;

// Names in a log line: the first few, then how many more.
constexpr int kNamesShown = 8;
// A client's text in a log line (a name, a node field, an error) is cut
// here: a hostile client cannot make one line huge.
constexpr size_t kTextShown = 512;

std::string Shown(absl::string_view text) {
  if (text.size() <= kTextShown) return internal::PrintableText(text);
  return absl::StrCat(internal::PrintableText(text.substr(0, kTextShown)),
                      "...(", text.size(), " bytes)");
}

template <typename Names>
std::string ShowNames(const Names& names, size_t count) {
  std::string out = "[";
  int shown = 0;
  for (const std::string& name : names) {
    if (shown == kNamesShown) break;
    absl::StrAppend(&out, shown ? ", " : "", Shown(name));
    ++shown;
  }
  if (count > static_cast<size_t>(shown))
    absl::StrAppend(&out, ", ... ", count - shown, " more");
  return out + "]";
}

std::string TypeName(absl::string_view type_url) {
  std::optional<XdsType> type = TypeOfUrl(type_url);
  return type ? ShortName(*type) : Shown(type_url);
}

}  // namespace

std::string AdsStream::NodeId() const { return Shown(node_.id()); }

std::string AdsStream::DescribeNode() const {
  std::string metadata;
  if (!google::protobuf::util::MessageToJsonString(node_.metadata(), &metadata)
           .ok()) {
    metadata = "(not printable)";
  }
  return absl::StrCat(
      "id=\"", Shown(node_.id()), "\" cluster=\"", Shown(node_.cluster()),
      "\" user_agent=\"", Shown(node_.user_agent_name()), " ",
      Shown(node_.user_agent_version()), "\" metadata=", Shown(metadata));
}

AdsRequestOutcome AdsStream::OnRequest(
    const discovery::DiscoveryRequest& request) {
  AdsRequestOutcome out;
  if (request.has_node() && !has_node_) {
    node_ = request.node();
    has_node_ = true;
    out.first_node = true;
  }
  const size_t names = request.resource_names().size();
  out.description =
      absl::StrCat(TypeName(request.type_url()), " version=\"",
                   Shown(request.version_info()), "\" nonce=\"",
                   Shown(request.response_nonce()),
                   "\" names=", ShowNames(request.resource_names(), names));
  out.type = TypeOfUrl(request.type_url());
  if (!out.type) {
    out.kind = AdsRequestOutcome::Kind::kUnknownType;
    absl::StrAppend(&out.description, " (type not served: ignored)");
    return out;
  }
  if (names > kMaxNamesPerRequest) {
    out.kind = AdsRequestOutcome::Kind::kTooManyNames;
    absl::StrAppend(&out.description, " more than ", kMaxNamesPerRequest,
                    " names: refused");
    return out;
  }
  TypeState& state = types_[static_cast<int>(*out.type)];
  if (!request.response_nonce().empty()) {
    if (request.response_nonce() != state.nonce) {
      out.kind = AdsRequestOutcome::Kind::kStale;
      absl::StrAppend(&out.description, " stale (latest nonce \"", state.nonce,
                      "\"): ignored");
      return out;
    }
    if (request.has_error_detail()) {
      out.kind = AdsRequestOutcome::Kind::kNack;
      out.repeated = state.nacked_nonce == request.response_nonce();
      state.nacked_nonce = request.response_nonce();
      out.error = Shown(request.error_detail().message());
      absl::StrAppend(&out.description,
                      " NACK code=", request.error_detail().code(), ": ",
                      out.error);
    } else {
      out.kind = AdsRequestOutcome::Kind::kAck;
      absl::StrAppend(&out.description, " ACK");
    }
  } else {
    absl::StrAppend(&out.description, " subscribe");
  }
  state.subscribed = true;
  const bool was_wildcard = state.wildcard;
  const std::set<std::string> before = std::move(state.names);
  state.names.clear();
  state.wildcard = false;
  for (const std::string& name : request.resource_names()) {
    if (name == "*") {
      state.wildcard = true;
    } else {
      state.names.insert(name);
    }
  }
  if (IsFullSet(*out.type) && names == 0 && !state.ever_named) {
    state.wildcard = true;
  }
  state.ever_named |= names > 0;
  if (IsFullSet(*out.type)) {
    // A name added is answered even if the set it selects is the same (the
    // name does not exist): the client learns so at once.
    for (const std::string& name : state.names) {
      if (!before.count(name)) state.answered = false;
    }
    if (state.wildcard && !was_wildcard) state.answered = false;
  } else {
    // Forget what was sent of names no longer asked for: asked again, they
    // are sent again.
    for (auto it = state.sent.begin(); it != state.sent.end();) {
      it = state.names.count(it->first) ? std::next(it) : state.sent.erase(it);
    }
  }
  return out;
}

std::vector<AdsResponse> AdsStream::Responses(const XdsCatalog& catalog) {
  std::vector<AdsResponse> out;
  // Make before break: clusters and their endpoints before the listeners
  // and routes that may name them.
  static constexpr XdsType kOrder[] = {XdsType::kCluster, XdsType::kEndpoints,
                                       XdsType::kListener, XdsType::kRoute};
  for (XdsType type : kOrder) {
    TypeState& state = types_[static_cast<int>(type)];
    if (!state.subscribed) continue;
    const auto& resources = catalog.resources(type);
    // What this response would carry: name → version.
    std::map<std::string, int64_t> owed;
    if (IsFullSet(type)) {
      if (!state.wildcard && state.names.empty()) {
        // Unsubscribed from everything: nothing to say; asked again, the
        // set is sent again.
        state.sent.clear();
        state.answered = false;
        continue;
      }
      if (state.wildcard) {
        for (const auto& [name, r] : resources) owed.emplace(name, r.version);
      } else {
        for (const std::string& name : state.names) {
          auto it = resources.find(name);
          if (it != resources.end()) owed.emplace(name, it->second.version);
        }
      }
      // The whole set again only if it differs from the last one sent; the
      // first answer is owed even when empty ("none of those exist").
      if (state.answered && owed == state.sent) continue;
      state.sent = owed;
    } else {
      for (const std::string& name : state.names) {
        auto it = resources.find(name);
        if (it == resources.end()) continue;
        auto sent = state.sent.find(name);
        if (sent != state.sent.end() && sent->second == it->second.version)
          continue;
        owed.emplace(name, it->second.version);
      }
      if (owed.empty()) continue;
      for (const auto& [name, version] : owed) state.sent[name] = version;
    }
    state.answered = true;
    state.nonce = absl::StrCat(++nonces_);
    AdsResponse& owed_response = out.emplace_back();
    discovery::DiscoveryResponse& response = owed_response.message;
    response.set_type_url(TypeUrl(type));
    response.set_version_info(absl::StrCat(catalog.version(type)));
    response.set_nonce(state.nonce);
    response.mutable_control_plane()->set_identifier("mesh-control-plane");
    for (const auto& [name, version] : owed) {
      *response.add_resources() = resources.at(name).resource;
      owed_response.names.push_back(name);
    }
  }
  return out;
}

std::string AdsResponse::Describe() const {
  return absl::StrCat(TypeName(message.type_url()), " version=\"",
                      message.version_info(), "\" nonce=\"", message.nonce(),
                      "\" resources=", ShowNames(names, names.size()));
}

}  // namespace mesh::controlplane
