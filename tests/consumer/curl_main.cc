// Built against an installed mesh and mesh_curl by tests/consumer/run.sh:
// proves the installed plain-HTTP library links and refuses a handle it
// cannot steer (no URL) with the documented code and a reason.
#include <curl/curl.h>

#include <cstdio>
#include <string>

#include "mesh/curl.h"
#include "mesh/mesh.h"

int main() {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  mesh::MeshOptions options;
  options.discovery = mesh::StaticDiscovery::Create();
  auto mesh = mesh::Mesh::Create(options);
  if (!mesh.ok()) return 1;
  auto channel = (*mesh)->NewChannel("books:80");
  if (!channel.ok()) return 2;
  CURL* easy = curl_easy_init();
  mesh::curl::Result r = mesh::curl::Perform(**channel, easy, {});
  curl_easy_cleanup(easy);
  if (r.code != CURLE_BAD_FUNCTION_ARGUMENT ||
      std::string(r.status.message()).find("CURLOPT_URL") ==
          std::string::npos) {
    std::fprintf(stderr, "curl consumer: unexpected %d: %s\n",
                 static_cast<int>(r.code), r.status.ToString().c_str());
    return 3;
  }
  std::printf("curl consumer ok: %s\n", r.status.ToString().c_str());
  curl_global_cleanup();
  return 0;
}
