// mesh_curl_bench: what mesh::curl costs per plain-HTTP request against the
// same libcurl handles alone, and what a real proxy hop costs (the libcurl
// issue's speed goals).
//
// The backend is nghttpd (Debian's nghttp2-server; HTTP/2 over cleartext,
// a 64-byte file) in another process. Closed-loop GET requests, connections
// kept, through each variant:
//   curl       the handles straight to nghttpd: curl_easy_perform at one in
//              flight, one curl multi handle at more
//   mesh       the same handles through mesh::curl: Perform at one in
//              flight, one mesh::curl::Multi at more; StaticDiscovery with
//              nghttpd's address, marked HTTP/2
//   proxy_hop  curl alone through nghttpx (an h2c reverse proxy, one
//              worker) in front of nghttpd
// Variants run interleaved, `--rounds` rounds of `--requests` requests each
// at every concurrency, so that machine noise hits all alike. Latency is
// per request, from its start to its end. The goal ratios (mesh p50 / curl
// p50 <= 1.05; the proxy's added p50 >= 10x mesh's) are medians of
// per-round ratios. `--only VARIANT` runs one variant (for callgrind:
// scripts/curl-cost.sh counts instructions per request).
//
//   mesh_curl_bench --out results/ [--requests 2000] [--rounds 8]
//       [--concurrency 1,8] [--only curl|mesh|proxy_hop]
//
// Exits 1 if nghttpd cannot start or a request fails.
#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/e2e/bench_cli.h"
#include "bench/e2e/child_server.h"
#include "bench/e2e/latency_stats.h"
#include "mesh/curl.h"
#include "mesh/mesh.h"

namespace mesh::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  std::string out = "results";
  int requests = 2000;
  int rounds = 8;
  std::vector<int> concurrency = {1, 8};
  std::string only;  // one variant alone
  std::string nghttpd = "nghttpd";
  std::string nghttpx = "nghttpx";
};

size_t Discard(char*, size_t size, size_t count, void* bytes) {
  *static_cast<size_t*>(bytes) += size * count;
  return size * count;
}

// One variant's handles and how it sends a request on one.
class Variant {
 public:
  Variant(std::string name, std::string url, int handles) : name_(name) {
    for (int i = 0; i < handles; ++i) {
      CURL* easy = curl_easy_init();
      curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
      curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Discard);
      curl_easy_setopt(easy, CURLOPT_WRITEDATA, &bytes_);
      easy_.push_back(easy);
    }
  }
  virtual ~Variant() {
    for (CURL* easy : easy_) curl_easy_cleanup(easy);
  }
  const std::string& name() const { return name_; }
  // Runs `n` requests, `easy_.size()` in flight; appends each latency (ms).
  virtual void Run(int n, std::vector<double>* ms) = 0;

 protected:
  std::string name_;
  std::vector<CURL*> easy_;
  size_t bytes_ = 0;
};

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// curl alone: easy_perform at one in flight, a multi handle at more. curl
// 7.88 reuses an h2c connection only for transfers that do not ask for
// prior knowledge: the first transfer opens it, the rest ride on it.
class CurlAlone : public Variant {
 public:
  CurlAlone(std::string name, std::string url, int handles)
      : Variant(std::move(name), std::move(url), handles) {
    CURL* first = easy_.front();
    curl_easy_setopt(first, CURLOPT_HTTP_VERSION,
                     CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
    if (handles == 1) {
      if (curl_easy_perform(first) != CURLE_OK) Die("curl: first request");
    } else {
      multi_ = curl_multi_init();
      curl_multi_add_handle(multi_, first);
      Drive(1, nullptr);
    }
    for (CURL* easy : easy_) {
      curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2_0);
      curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
    }
  }
  ~CurlAlone() override {
    if (multi_ != nullptr) curl_multi_cleanup(multi_);
  }
  void Run(int n, std::vector<double>* ms) override {
    if (multi_ == nullptr) {
      for (int i = 0; i < n; ++i) {
        const Clock::time_point t0 = Clock::now();
        if (curl_easy_perform(easy_.front()) != CURLE_OK) Die("curl: request");
        ms->push_back(Ms(t0, Clock::now()));
      }
      return;
    }
    started_ = 0;
    for (CURL* easy : easy_) {
      if (started_ == n) break;
      Add(easy);
    }
    Drive(n, ms);
  }

 private:
  void Add(CURL* easy) {
    start_[easy] = Clock::now();
    ++started_;
    curl_multi_add_handle(multi_, easy);
  }
  // Until `n` requests have ended, each ending handle starting the next.
  void Drive(int n, std::vector<double>* ms) {
    int ended = 0;
    while (ended < n) {
      int running = 0;
      curl_multi_perform(multi_, &running);
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi_, &left)) {
        if (msg->msg != CURLMSG_DONE) continue;
        if (msg->data.result != CURLE_OK) Die("curl: request in the multi");
        CURL* easy = msg->easy_handle;
        curl_multi_remove_handle(multi_, easy);
        ++ended;
        if (ms != nullptr) ms->push_back(Ms(start_[easy], Clock::now()));
        if (started_ < n) Add(easy);
      }
      if (ended < n) curl_multi_poll(multi_, nullptr, 0, 1000, nullptr);
    }
  }
  CURLM* multi_ = nullptr;
  int started_ = 0;
  std::map<CURL*, Clock::time_point> start_;
};

// The same handles through mesh::curl.
class ThroughMesh : public Variant {
 public:
  ThroughMesh(Channel& channel, std::string url, int handles)
      : Variant("mesh", std::move(url), handles), channel_(channel) {
    request_.write = {&Discard, &bytes_};
  }
  void Run(int n, std::vector<double>* ms) override {
    if (easy_.size() == 1) {
      for (int i = 0; i < n; ++i) {
        const Clock::time_point t0 = Clock::now();
        curl::Result r = curl::Perform(channel_, easy_.front(), request_);
        if (r.code != CURLE_OK)
          Die(absl::StrCat("mesh: ", r.status.ToString()));
        ms->push_back(Ms(t0, Clock::now()));
      }
      return;
    }
    int started = 0;
    std::function<void(CURL*)> add = [&](CURL* easy) {
      ++started;
      const Clock::time_point t0 = Clock::now();
      multi_.Add(channel_, easy, request_, [&, easy, t0](curl::Result r) {
        if (r.code != CURLE_OK)
          Die(absl::StrCat("mesh: ", r.status.ToString()));
        ms->push_back(Ms(t0, Clock::now()));
        if (started < n) add(easy);
      });
    };
    for (CURL* easy : easy_) {
      if (started == n) break;
      add(easy);
    }
    while (multi_.Poll(absl::Seconds(10)) > 0) {
    }
  }

 private:
  Channel& channel_;
  curl::Request request_;
  curl::Multi multi_;
};

std::string Ratio(double x) { return absl::StrFormat("%.3f", x); }

int Main(int argc, char** argv) {
  Flags f;
  ParseFlagsOrDie(argc, argv,
                  {{"out", "DIR", TextFlag(&f.out)},
                   {"requests", "N", IntFlag(&f.requests, 1)},
                   {"rounds", "N", IntFlag(&f.rounds, 1)},
                   {"concurrency", "N,N", IntListFlag(&f.concurrency, 1)},
                   {"only", "VARIANT", TextFlag(&f.only)},
                   {"nghttpd", "PATH", TextFlag(&f.nghttpd)},
                   {"nghttpx", "PATH", TextFlag(&f.nghttpx)}});
  curl_global_init(CURL_GLOBAL_DEFAULT);
  // The backend's document root: one 64-byte file.
  const std::filesystem::path root = std::filesystem::temp_directory_path() /
                                     absl::StrCat("mesh-curl-bench-", getpid());
  std::filesystem::create_directories(root);
  std::ofstream(root / "b") << std::string(64, 'b');
  std::string why;
  std::unique_ptr<ChildServer> backend = ChildServer::Start(
      {f.nghttpd, "--no-tls", "-d", root.string(), "{port}"}, &why);
  if (backend == nullptr) {
    Die(absl::StrCat("backend: ", why, " (Debian: nghttp2-server)"));
  }
  std::unique_ptr<ChildServer> proxy;
  if (f.only.empty() || f.only == "proxy_hop") {
    proxy = ChildServer::Start(
        {f.nghttpx, "--frontend=127.0.0.1,{port};no-tls",
         absl::StrCat("--backend=127.0.0.1,", backend->port(), ";;proto=h2"),
         "--workers=1", "--no-ocsp", "--no-via", "--conf=/dev/null",
         "--accesslog-file=/dev/null", "--errorlog-file=/dev/null"},
        &why);
    if (proxy == nullptr) std::printf("proxy_hop skipped: %s\n", why.c_str());
  }
  auto discovery = StaticDiscovery::Create();
  Endpoint e(absl::StrCat("127.0.0.1:", backend->port()));
  e.protocol_hint = ProtocolHint::kHttp2;
  if (!discovery->SetEndpoints("backend:80", {e}).ok()) Die("endpoints");
  MeshOptions options;
  options.discovery = discovery;
  auto mesh = Mesh::Create(options);
  if (!mesh.ok()) Die(mesh.status().ToString());
  auto channel = (*mesh)->NewChannel("backend:80");
  if (!channel.ok()) Die(channel.status().ToString());

  MarkdownTable table({"in flight", "variant", "requests", "p50 ms", "p99 ms",
                       "p50 / curl (median of rounds)"});
  std::string csv = "concurrency,variant,round,requests,p50_ms,p99_ms\n";
  for (int c : f.concurrency) {
    std::vector<std::unique_ptr<Variant>> variants;
    auto want = [&](const std::string& name) {
      return f.only.empty() || f.only == name;
    };
    if (want("curl")) {
      variants.push_back(std::make_unique<CurlAlone>(
          "curl", absl::StrCat("http://127.0.0.1:", backend->port(), "/b"), c));
    }
    if (want("mesh")) {
      variants.push_back(
          std::make_unique<ThroughMesh>(**channel, "http://backend:80/b", c));
    }
    if (want("proxy_hop") && proxy != nullptr) {
      variants.push_back(std::make_unique<CurlAlone>(
          "proxy_hop", absl::StrCat("http://127.0.0.1:", proxy->port(), "/b"),
          c));
    }
    std::map<std::string, std::vector<double>> all, p50s;
    for (auto& v : variants) {  // warm-up: connections, caches, estimates
      std::vector<double> ignored;
      v->Run(std::max(50, f.requests / 10), &ignored);
    }
    for (int round = 0; round < f.rounds; ++round) {
      for (auto& v : variants) {
        std::vector<double> ms;
        v->Run(f.requests, &ms);
        LatencyStats s = LatencyStats::From(v->name(), ms, f.requests);
        p50s[v->name()].push_back(s.Percentile(50));
        all[v->name()].insert(all[v->name()].end(), ms.begin(), ms.end());
        absl::StrAppend(&csv, c, ",", v->name(), ",", round, ",", f.requests,
                        ",", s.Percentile(50), ",", s.Percentile(99), "\n");
      }
    }
    // Median over rounds of a per-round ratio.
    auto median_ratio = [&](const std::string& a, const std::string& b,
                            auto fn) {
      std::vector<double> r;
      for (size_t i = 0; i < p50s[a].size() && i < p50s[b].size(); ++i) {
        r.push_back(fn(p50s[a][i], p50s[b][i]));
      }
      std::sort(r.begin(), r.end());
      return r.empty() ? 0.0 : r[r.size() / 2];
    };
    for (auto& v : variants) {
      LatencyStats s =
          LatencyStats::From(v->name(), all[v->name()], all[v->name()].size());
      std::string ratio =
          p50s.count("curl") != 0
              ? Ratio(median_ratio(v->name(), "curl",
                                   [](double x, double y) { return x / y; }))
              : "";
      table.AddRow({absl::StrCat(c), v->name(), Thousands(s.calls()),
                    absl::StrFormat("%.3f", s.Percentile(50)),
                    absl::StrFormat("%.3f", s.Percentile(99)), ratio});
    }
    if (p50s.count("curl") != 0 && p50s.count("mesh") != 0 &&
        p50s.count("proxy_hop") != 0) {
      // What each adds to curl alone, per round; the proxy's over mesh's.
      std::vector<double> r;
      for (int i = 0; i < f.rounds; ++i) {
        const double mesh_added = p50s["mesh"][i] - p50s["curl"][i];
        const double proxy_added = p50s["proxy_hop"][i] - p50s["curl"][i];
        r.push_back(mesh_added > 0 ? proxy_added / mesh_added : 1e9);
      }
      std::sort(r.begin(), r.end());
      std::printf(
          "in flight %d: the proxy hop adds %.1fx what mesh adds "
          "(median of rounds; goal >= 10x)\n",
          c, r[r.size() / 2]);
    }
  }
  std::printf("%s", table.ToString().c_str());
  WriteResultsOrDie(f.out, {{"curl_overhead.csv", csv},
                            {"curl_overhead.md", table.ToString()}});
  std::filesystem::remove_all(root);
  curl_global_cleanup();
  return 0;
}

}  // namespace
}  // namespace mesh::bench

int main(int argc, char** argv) { return mesh::bench::Main(argc, argv); }
