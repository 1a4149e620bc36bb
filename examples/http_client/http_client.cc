// mesh-http-client: an ordinary libcurl program — a handle, its URL, its
// write callback, a loop of requests — whose requests go through mesh. The
// mesh-specific lines are where the Mesh and the channel are made, and the
// one that replaces curl_easy_perform; every request is then routed,
// balanced (P2C), retried, tapped and counted by mesh, over HTTP/2 to
// endpoints that speak it.
//
//   mesh-http-client CONTROL_PLANE TARGET PATH [COUNT]
//   mesh-http-client 127.0.0.1:8086 books.local:7001 /books/1 100
//
// CONTROL_PLANE is Linkerd's Destination API (in a cluster
// "linkerd-dst-headless.linkerd.svc.cluster.local:8086"; in the demo,
// mesh-control-plane's).
#include <curl/curl.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "mesh/curl.h"
#include "mesh/mesh.h"

namespace {

size_t Append(char* data, size_t size, size_t count, void* body) {
  static_cast<std::string*>(body)->append(data, size * count);
  return size * count;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: %s CONTROL_PLANE TARGET PATH [COUNT]\n",
                 argv[0]);
    return 2;
  }
  const std::string target = argv[2];
  const int count = argc == 5 ? std::atoi(argv[4]) : 10;

  // mesh: once per process, the Mesh and a channel to the destination.
  mesh::LinkerdDiscoveryOptions linkerd;
  linkerd.address = argv[1];
  auto discovery = mesh::NewLinkerdDiscovery(linkerd);
  if (!discovery.ok()) {
    std::fprintf(stderr, "%s\n", discovery.status().ToString().c_str());
    return 1;
  }
  mesh::MeshOptions options;
  options.discovery = *discovery;
  auto mesh = mesh::Mesh::Create(options);
  if (!mesh.ok()) {
    std::fprintf(stderr, "%s\n", mesh.status().ToString().c_str());
    return 1;
  }
  auto channel = (*mesh)->NewChannel(target);
  if (!channel.ok()) {
    std::fprintf(stderr, "%s\n", channel.status().ToString().c_str());
    return 1;
  }

  // The application's own libcurl code, unchanged.
  curl_global_init(CURL_GLOBAL_DEFAULT);
  CURL* easy = curl_easy_init();
  const std::string url = "http://" + target + argv[3];
  std::string body;
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);

  // mesh: what libcurl cannot tell mesh about the handle (its callback).
  mesh::curl::Request request;
  request.write = {&Append, &body};

  std::map<std::string, int> by_endpoint;
  std::map<long, int> by_status;
  for (int i = 0; i < count; ++i) {
    body.clear();
    // mesh: the line that was `CURLcode rc = curl_easy_perform(easy);`
    mesh::curl::Result r = mesh::curl::Perform(**channel, easy, request);
    if (r.code != CURLE_OK) {
      std::fprintf(stderr, "request %d: %s (%s)\n", i,
                   curl_easy_strerror(r.code), r.status.ToString().c_str());
      continue;
    }
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    ++by_status[status];
    ++by_endpoint[r.endpoint];
    if (i == 0)
      std::printf("first answer: %ld, %zu bytes\n", status, body.size());
  }
  for (const auto& [endpoint, n] : by_endpoint) {
    std::printf("  %-22s %d requests\n", endpoint.c_str(), n);
  }
  for (const auto& [status, n] : by_status) {
    std::printf("  HTTP %ld: %d\n", status, n);
  }
  long version = 0;
  curl_easy_getinfo(easy, CURLINFO_HTTP_VERSION, &version);
  std::printf("  last request over HTTP/%s\n",
              version == CURL_HTTP_VERSION_2_0 ? "2" : "1.1");
  curl_easy_cleanup(easy);
  curl_global_cleanup();
  return 0;
}
