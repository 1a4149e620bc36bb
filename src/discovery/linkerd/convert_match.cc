#include "src/discovery/linkerd/convert_match.h"

#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "re2/re2.h"
#include "src/model/http_syntax.h"

namespace mesh::internal::linkerd {
namespace {

namespace dst = ::io::linkerd::proxy::destination;
namespace http = ::io::linkerd::proxy::http_types;

}  // namespace

absl::StatusOr<std::string> ConvertMethod(const http::HttpMethod& method) {
  switch (method.type_case()) {
    case http::HttpMethod::kRegistered:
      switch (method.registered()) {
        case http::HttpMethod::GET:
          return std::string("GET");
        case http::HttpMethod::POST:
          return std::string("POST");
        case http::HttpMethod::PUT:
          return std::string("PUT");
        case http::HttpMethod::DELETE:
          return std::string("DELETE");
        case http::HttpMethod::PATCH:
          return std::string("PATCH");
        case http::HttpMethod::OPTIONS:
          return std::string("OPTIONS");
        case http::HttpMethod::CONNECT:
          return std::string("CONNECT");
        case http::HttpMethod::HEAD:
          return std::string("HEAD");
        case http::HttpMethod::TRACE:
          return std::string("TRACE");
        default:
          return absl::InvalidArgumentError(
              absl::StrCat("method match has unknown registered method ",
                           static_cast<int>(method.registered())));
      }
    case http::HttpMethod::kUnregistered:
      if (!IsHttpToken(method.unregistered())) {
        return absl::InvalidArgumentError(
            absl::StrCat("method match '", absl::CEscape(method.unregistered()),
                         "' is not an HTTP method token"));
      }
      return method.unregistered();
    case http::HttpMethod::TYPE_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "method match has neither registered nor unregistered set");
}

absl::StatusOr<RequestMatch> ConvertRequestMatch(
    const dst::RequestMatch& match) {
  switch (match.match_case()) {
    case dst::RequestMatch::kAll:
    case dst::RequestMatch::kAny: {
      const bool all = match.match_case() == dst::RequestMatch::kAll;
      const dst::RequestMatch::Seq& seq = all ? match.all() : match.any();
      std::vector<RequestMatch> children;
      children.reserve(seq.matches_size());
      for (const dst::RequestMatch& child : seq.matches()) {
        absl::StatusOr<RequestMatch> c = ConvertRequestMatch(child);
        if (!c.ok()) return c.status();
        children.push_back(*std::move(c));
      }
      return all ? RequestMatch::All(std::move(children))
                 : RequestMatch::Any(std::move(children));
    }
    case dst::RequestMatch::kNot: {
      // Presence of a oneof message is all the wire can say, so "no inner
      // match" arrives as an empty inner node.
      if (match.not_().match_case() == dst::RequestMatch::MATCH_NOT_SET) {
        return absl::InvalidArgumentError("a 'not' match has no inner match");
      }
      absl::StatusOr<RequestMatch> inner = ConvertRequestMatch(match.not_());
      if (!inner.ok()) return inner.status();
      return RequestMatch::Not(*std::move(inner));
    }
    case dst::RequestMatch::kPath: {
      // Trimmed as linkerd2-proxy does: a stray space from YAML would
      // otherwise make the route never match.
      const std::string regex(absl::StripAsciiWhitespace(match.path().regex()));
      RE2 re(regex, RE2::Quiet);
      if (!re.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("path regex '", absl::CEscape(regex),
                         "' does not compile: ", re.error()));
      }
      return RequestMatch::Path(regex);
    }
    case dst::RequestMatch::kMethod: {
      absl::StatusOr<std::string> method = ConvertMethod(match.method());
      if (!method.ok()) return method.status();
      return RequestMatch::Method(*std::move(method));
    }
    case dst::RequestMatch::MATCH_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "a request match node has none of all, any, not, path or method set");
}

absl::StatusOr<ResponseMatch> ConvertResponseMatch(
    const dst::ResponseMatch& match) {
  switch (match.match_case()) {
    case dst::ResponseMatch::kAll:
    case dst::ResponseMatch::kAny: {
      const bool all = match.match_case() == dst::ResponseMatch::kAll;
      const dst::ResponseMatch::Seq& seq = all ? match.all() : match.any();
      // linkerd2-proxy rejects these: an empty `all` would classify every
      // response, an empty `any` none, and neither is what a profile author
      // meant.
      if (seq.matches().empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "an empty '", all ? "all" : "any", "' in a response match"));
      }
      std::vector<ResponseMatch> children;
      children.reserve(seq.matches_size());
      for (const dst::ResponseMatch& child : seq.matches()) {
        absl::StatusOr<ResponseMatch> c = ConvertResponseMatch(child);
        if (!c.ok()) return c.status();
        children.push_back(*std::move(c));
      }
      return all ? ResponseMatch::All(std::move(children))
                 : ResponseMatch::Any(std::move(children));
    }
    case dst::ResponseMatch::kNot: {
      if (match.not_().match_case() == dst::ResponseMatch::MATCH_NOT_SET) {
        return absl::InvalidArgumentError("a 'not' match has no inner match");
      }
      absl::StatusOr<ResponseMatch> inner = ConvertResponseMatch(match.not_());
      if (!inner.ok()) return inner.status();
      return ResponseMatch::Not(*std::move(inner));
    }
    case dst::ResponseMatch::kStatus: {
      const uint32_t min = match.status().min();
      const uint32_t max = match.status().max();
      if (min < 100 || min > 999 || max < 100 || max > 999) {
        return absl::InvalidArgumentError(absl::StrCat(
            "status range ", min, "..", max, " has a bound outside 100..999"));
      }
      if (min > max) {
        return absl::InvalidArgumentError(
            absl::StrCat("status range ", min, "..", max, " has min > max"));
      }
      return ResponseMatch::Status(min, max);
    }
    case dst::ResponseMatch::MATCH_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "a response match node has none of all, any, not or status set");
}

}  // namespace mesh::internal::linkerd
