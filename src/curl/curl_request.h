// What one mesh::curl request is, read from the application's easy handle
// (its URL and CURLOPT_CUSTOMREQUEST) and its Request (what libcurl cannot
// report): the method, scheme, authority, path and headers that routes
// match on and tap shows, and whether the body can be sent again.
//
// Pure functions over the handle's readable state: thread-compatible.
#ifndef MESH_SRC_CURL_CURL_REQUEST_H_
#define MESH_SRC_CURL_CURL_REQUEST_H_

#include <curl/curl.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mesh/curl.h"
#include "mesh/metadata.h"

namespace mesh::internal {

struct CurlRequestHead {
  std::string method;  // "GET"
  std::string scheme;  // "http" or "https"
  // The handle's URL text: curl's copy, valid until CURLOPT_URL is set
  // again (copy it before).
  const char* url = nullptr;
  std::string host;       // the URL's host
  std::string port;       // the URL's port; empty if it names none
  std::string authority;  // the URL's host[:port], as written
  std::string path;       // from '/', with its query
  // The header list's "name: value" lines, names lower case, in order.
  Metadata headers;
  // Lines of the list that are no header and are sent as the application
  // wrote them: "Name:" (curl leaves out its own header of that name). A
  // "Name;" line (a header with an empty value) is in `headers`.
  std::vector<std::string> curl_directives;
  bool replayable = false;  // the body can be sent again
};

// Fills `out` (a fresh one), or says INVALID_ARGUMENT naming the problem:
// no URL, a URL that does not parse, a scheme other than http and https, a
// header line without a name, a Body::kRewind without its seek callback.
absl::Status ReadCurlRequest(CURL* easy, const curl::Request& request,
                             CurlRequestHead* out);

// The handle's header list for an attempt whose headers the route changed:
// the directives, then `headers` as "name: value" lines ("name;" for an
// empty value). Owned by the
// caller (curl_slist_free_all); null when both are empty.
curl_slist* BuildHeaderList(const std::vector<std::string>& curl_directives,
                            const Metadata& headers);

}  // namespace mesh::internal

#endif  // MESH_SRC_CURL_CURL_REQUEST_H_
