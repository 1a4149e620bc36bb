#include "src/curl/curl_request.h"

#include <memory>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace mesh::internal {
namespace {

struct UrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
struct PartDeleter {
  void operator()(char* p) const { curl_free(p); }
};
using Part = std::unique_ptr<char, PartDeleter>;

// One part of `url` (null when it has none).
Part GetPart(CURLU* url, CURLUPart which) {
  char* out = nullptr;
  if (curl_url_get(url, which, &out, 0) != CURLUE_OK) return nullptr;
  return Part(out);
}

// What curl's URL API says of a URL's scheme and authority.
struct UrlPrefix {
  std::string text;  // "scheme://authority", as written
  std::string scheme;
  std::string host;
  std::string port;
  std::string authority;  // host[:port]
};

// Parses `url` (whole) with curl's URL API into `head`'s URL parts, or
// INVALID_ARGUMENT naming the problem.
absl::Status ParseUrl(const char* url_text, CurlRequestHead* head) {
  std::unique_ptr<CURLU, UrlDeleter> url(curl_url());
  if (CURLUcode rc = curl_url_set(url.get(), CURLUPART_URL, url_text, 0);
      rc != CURLUE_OK) {
    return absl::InvalidArgumentError(
        absl::StrCat("the handle's URL '", url_text,
                     "' does not parse: ", curl_url_strerror(rc)));
  }
  Part scheme = GetPart(url.get(), CURLUPART_SCHEME);
  Part host = GetPart(url.get(), CURLUPART_HOST);
  Part port = GetPart(url.get(), CURLUPART_PORT);
  Part path = GetPart(url.get(), CURLUPART_PATH);
  Part query = GetPart(url.get(), CURLUPART_QUERY);
  head->scheme = absl::AsciiStrToLower(scheme ? scheme.get() : "");
  head->host = host ? host.get() : "";
  head->port = port ? port.get() : "";
  head->authority = head->port.empty()
                        ? head->host
                        : absl::StrCat(head->host, ":", head->port);
  head->path = path && *path.get() != '\0' ? path.get() : "/";
  if (query) absl::StrAppend(&head->path, "?", query.get());
  return absl::OkStatus();
}

// Where the authority after "scheme://" at `from` ends: its first '/', '?'
// or '#' (npos: the end). A loop, as a URL is short (absl's find_first_of
// builds a table of the characters on every call).
size_t AuthorityEnd(absl::string_view url, size_t from) {
  for (size_t i = from; i < url.size(); ++i) {
    const char c = url[i];
    if (c == '/' || c == '?' || c == '#') return i;
  }
  return absl::string_view::npos;
}

// Whether curl would change `rest` (the path and query) before sending
// it: a fragment or backslash, or a dot segment to resolve.
bool CurlRewrites(absl::string_view rest) {
  for (size_t i = 0; i < rest.size(); ++i) {
    const char c = rest[i];
    if (c == '#' || c == '\\') return true;
    if (c == '/' && i + 1 < rest.size() && rest[i + 1] == '.') return true;
  }
  return false;
}

// The same, parsing only the scheme and authority with curl's URL API,
// once per thread while they stay the same (a thread's requests mostly go
// to a few), and taking the path and query as written when curl would
// send them so (no dot segment to resolve, no fragment to drop).
absl::Status ParseUrlCached(const char* url_text, CurlRequestHead* head) {
  thread_local UrlPrefix cache;
  const absl::string_view url = url_text;
  const size_t sep = url.find("://");
  if (sep == absl::string_view::npos) return ParseUrl(url_text, head);
  const size_t end = AuthorityEnd(url, sep + 3);
  const absl::string_view prefix = url.substr(0, end);
  const absl::string_view rest =
      end == absl::string_view::npos ? absl::string_view() : url.substr(end);
  if (CurlRewrites(rest)) return ParseUrl(url_text, head);
  if (cache.text != prefix) {
    CurlRequestHead parsed;
    const std::string root = absl::StrCat(prefix, "/");
    if (absl::Status s = ParseUrl(root.c_str(), &parsed); !s.ok()) {
      return ParseUrl(url_text, head);  // names the URL the handle has
    }
    cache.text = std::string(prefix);
    cache.scheme = std::move(parsed.scheme);
    cache.host = std::move(parsed.host);
    cache.port = std::move(parsed.port);
    cache.authority = std::move(parsed.authority);
  }
  head->scheme = cache.scheme;
  head->host = cache.host;
  head->port = cache.port;
  head->authority = cache.authority;
  if (rest.empty()) {
    head->path = "/";
  } else if (rest[0] == '?') {
    head->path = absl::StrCat("/", rest);
  } else {
    head->path = std::string(rest);
  }
  return absl::OkStatus();
}

bool MethodHasNoBody(absl::string_view method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS" ||
         method == "DELETE" || method == "TRACE";
}

}  // namespace

absl::Status ReadCurlRequest(CURL* easy, const curl::Request& request,
                             CurlRequestHead* out) {
  CurlRequestHead& head = *out;
  char* url_text = nullptr;
  curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_URL, &url_text);
  if (url_text == nullptr || *url_text == '\0') {
    return absl::InvalidArgumentError("the handle has no CURLOPT_URL");
  }
  if (absl::Status s = ParseUrlCached(url_text, &head); !s.ok()) return s;
  if (head.scheme != "http" && head.scheme != "https") {
    return absl::InvalidArgumentError(
        absl::StrCat("the handle's URL '", url_text,
                     "' is not http or https: mesh::curl sends HTTP only"));
  }
  head.url = url_text;

  if (!request.method.empty()) {
    head.method = request.method;
  } else {
    char* method = nullptr;
    curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_METHOD, &method);
    head.method = method != nullptr && *method != '\0' ? method : "GET";
  }

  for (const curl_slist* l = request.headers; l != nullptr; l = l->next) {
    absl::string_view line = l->data != nullptr ? l->data : "";
    const size_t colon = line.find(':');
    const size_t semi = line.find(';');
    if (colon == absl::string_view::npos && semi != absl::string_view::npos &&
        absl::StripAsciiWhitespace(line.substr(semi + 1)).empty()) {
      // "Name;": the header with an empty value.
      head.headers.emplace_back(
          absl::AsciiStrToLower(
              absl::StripAsciiWhitespace(line.substr(0, semi))),
          "");
      continue;
    }
    if (colon == absl::string_view::npos || colon == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "header line '", line, "' of Request::headers has no name"));
    }
    absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (value.empty()) {
      // "Name:": curl leaves out its own header of that name.
      head.curl_directives.emplace_back(line);
      continue;
    }
    head.headers.emplace_back(absl::AsciiStrToLower(line.substr(0, colon)),
                              std::string(value));
  }

  using Body = curl::Request::Body;
  switch (request.body) {
    case Body::kUnknown:
      head.replayable = MethodHasNoBody(head.method);
      break;
    case Body::kNone:
    case Body::kBuffer:
      head.replayable = true;
      break;
    case Body::kRewind:
      if (request.seek == nullptr) {
        return absl::InvalidArgumentError(
            "Request::body is kRewind but Request::seek is null");
      }
      head.replayable = true;
      break;
    case Body::kOnce:
      head.replayable = false;
      break;
  }
  return absl::OkStatus();
}

curl_slist* BuildHeaderList(const std::vector<std::string>& curl_directives,
                            const Metadata& headers) {
  curl_slist* list = nullptr;
  for (const std::string& line : curl_directives) {
    list = curl_slist_append(list, line.c_str());
  }
  for (const auto& [name, value] : headers) {
    // curl sends "name;" as the header with an empty value.
    list = curl_slist_append(
        list, value.empty() ? absl::StrCat(name, ";").c_str()
                            : absl::StrCat(name, ": ", value).c_str());
  }
  return list;
}

}  // namespace mesh::internal
