// mesh::curl end to end: the application's own libcurl easy handles sent
// through a Mesh to real HTTP/2 servers on 127.0.0.1 (H2TestServer, built on
// libnghttp2): spreading, discovery, a slow endpoint, timeouts, retries and
// what may not be retried, a failing endpoint ejected, headers and a 1 MB
// body both ways, the application's callbacks, cancellation, HTTP/2 with one
// connection per endpoint, and the handle's options put back.
#include "mesh/curl.h"

#include <curl/curl.h>

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mesh/mesh.h"
#include "tests/support/h2_test_server.h"
#include "tests/support/test_support.h"

namespace mesh {
namespace {

using ::testing::Gt;
using testing::H2TestServer;
using ::testing::HasSubstr;

constexpr char kTarget[] = "books:7001";
constexpr char kUrl[] = "http://books:7001/books/1?x=1";

size_t Append(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

struct EasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
using Easy = std::unique_ptr<CURL, EasyDeleter>;

// A handle set up as an application would: URL, its write and header
// callbacks into `body` and `headers`.
Easy NewEasy(const std::string& url, std::string* body, std::string* headers) {
  Easy easy(curl_easy_init());
  curl_easy_setopt(easy.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy.get(), CURLOPT_WRITEFUNCTION, &Append);
  curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, body);
  curl_easy_setopt(easy.get(), CURLOPT_HEADERFUNCTION, &Append);
  curl_easy_setopt(easy.get(), CURLOPT_HEADERDATA, headers);
  return easy;
}

// What the application tells mesh about such a handle.
curl::Request RequestFor(std::string* body, std::string* headers) {
  curl::Request request;
  request.write = {&Append, body};
  request.header = {&Append, headers};
  return request;
}

// A server whose answer names it.
H2TestServer::Handler Named(const std::string& name, int status = 200,
                            absl::Duration delay = absl::ZeroDuration()) {
  return [name, status, delay](const H2TestServer::Request&) {
    H2TestServer::Response out;
    out.status = status;
    out.body = name;
    out.headers = {{"x-server", name}};
    out.delay = delay;
    return out;
  };
}

class CurlTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { curl_global_init(CURL_GLOBAL_DEFAULT); }

  H2TestServer& AddServer(H2TestServer::Handler handler) {
    servers_.push_back(std::make_unique<H2TestServer>(std::move(handler)));
    EXPECT_TRUE(servers_.back()->Start().ok());
    return *servers_.back();
  }

  // Endpoints that speak HTTP/2, as Linkerd's Destination would say.
  void SetEndpoints(const std::vector<H2TestServer*>& servers) {
    std::vector<Endpoint> endpoints;
    for (H2TestServer* s : servers) {
      Endpoint e(s->address());
      e.protocol_hint = ProtocolHint::kHttp2;
      endpoints.push_back(std::move(e));
    }
    ASSERT_TRUE(mesh_.discovery->SetEndpoints(kTarget, endpoints).ok());
  }

  std::unique_ptr<Channel> NewChannel(ChannelOptions options = {}) {
    auto channel = mesh_.mesh->NewChannel(kTarget, options);
    EXPECT_TRUE(channel.ok()) << channel.status();
    return std::move(*channel);
  }

  testing::StaticMesh mesh_;
  std::vector<std::unique_ptr<H2TestServer>> servers_;
};

TEST_F(CurlTest, SpreadsRequestsOverEndpointsOnOneHttp2ConnectionEach) {
  H2TestServer& a = AddServer(Named("a"));
  H2TestServer& b = AddServer(Named("b"));
  H2TestServer& c = AddServer(Named("c"));
  SetEndpoints({&a, &b, &c});
  auto channel = NewChannel();
  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);
  std::map<std::string, int> by_endpoint;
  constexpr int kRequests = 90;
  for (int i = 0; i < kRequests; ++i) {
    body.clear();
    curl::Result r =
        curl::Perform(*channel, easy.get(), RequestFor(&body, &headers));
    ASSERT_EQ(r.code, CURLE_OK) << r.status;
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_EQ(r.http_status, 200);
    EXPECT_EQ(r.attempts, 1u);
    ++by_endpoint[r.endpoint];
    // The body came from the endpoint the result names.
    const std::string expected = r.endpoint == a.address()   ? "a"
                                 : r.endpoint == b.address() ? "b"
                                                             : "c";
    EXPECT_EQ(body, expected);
    long version = 0;
    curl_easy_getinfo(easy.get(), CURLINFO_HTTP_VERSION, &version);
    EXPECT_EQ(version, CURL_HTTP_VERSION_2_0);
  }
  EXPECT_EQ(by_endpoint.size(), 3u);
  for (H2TestServer* s : {&a, &b, &c}) {
    // P2C prefers the faster of two: shares vary, none is left out.
    EXPECT_THAT(s->requests(), Gt(2)) << s->address();
    // HTTP/2, one connection per endpoint over all the requests.
    EXPECT_EQ(s->connections(), 1) << s->address();
  }
  EXPECT_EQ(a.requests() + b.requests() + c.requests(), kRequests);
  // The server saw the application's URL: its authority, path and query.
  H2TestServer::Request seen = a.received().front();
  EXPECT_EQ(seen.method, "GET");
  EXPECT_EQ(seen.path, "/books/1?x=1");
  EXPECT_EQ(seen.authority, "books:7001");
  EXPECT_EQ(seen.scheme, "http");
}

TEST_F(CurlTest, FollowsTheEndpointsDiscoveryGives) {
  H2TestServer& a = AddServer(Named("a"));
  H2TestServer& b = AddServer(Named("b"));
  SetEndpoints({&a});
  auto channel = NewChannel();
  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);
  for (int i = 0; i < 5; ++i) {
    curl::Result r =
        curl::Perform(*channel, easy.get(), RequestFor(&body, &headers));
    EXPECT_EQ(r.endpoint, a.address());
  }
  SetEndpoints({&b});
  ASSERT_TRUE(testing::WaitFor([&] {
    curl::Result r =
        curl::Perform(*channel, easy.get(), RequestFor(&body, &headers));
    return r.endpoint == b.address();
  }));
  for (int i = 0; i < 5; ++i) {
    curl::Result r =
        curl::Perform(*channel, easy.get(), RequestFor(&body, &headers));
    EXPECT_EQ(r.endpoint, b.address());
    EXPECT_EQ(r.http_status, 200);
  }
}

TEST_F(CurlTest, AvoidsASlowEndpoint) {
  H2TestServer& fast1 = AddServer(Named("fast1"));
  H2TestServer& fast2 = AddServer(Named("fast2"));
  H2TestServer& slow = AddServer(Named("slow", 200, absl::Milliseconds(100)));
  SetEndpoints({&fast1, &fast2, &slow});
  auto channel = NewChannel();
  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);
  constexpr int kRequests = 150;
  for (int i = 0; i < kRequests; ++i) {
    curl::Result r =
        curl::Perform(*channel, easy.get(), RequestFor(&body, &headers));
    ASSERT_EQ(r.http_status, 200) << r.status;
  }
  // Peak-EWMA sees the slow one's latency: it gets a small share.
  EXPECT_LT(slow.requests(), kRequests / 10);
  EXPECT_EQ(fast1.requests() + fast2.requests() + slow.requests(), kRequests);
}

TEST_F(CurlTest, TheRoutesTimeoutEndsTheRequestAndTheServerSeesIt) {
  H2TestServer& a = AddServer(Named("a", 200, absl::Seconds(5)));
  SetEndpoints({&a});
  auto channel = NewChannel();
  ServiceConfig config;
  Route route;
  route.name = "books";
  route.condition = RequestMatch::PathPrefix("/books/");
  route.timeout = absl::Milliseconds(200);
  config.routes.push_back(route);
  mesh_.Configure(*channel, kTarget, config);
  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);
  const absl::Time start = absl::Now();
  curl::Result r =
      curl::Perform(*channel, easy.get(), RequestFor(&body, &headers));
  const absl::Duration took = absl::Now() - start;
  EXPECT_EQ(r.code, CURLE_OPERATION_TIMEDOUT);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kDeadlineExceeded) << r.status;
  EXPECT_LT(took, absl::Seconds(2));
  EXPECT_TRUE(body.empty());
  EXPECT_TRUE(testing::WaitFor([&] { return a.cancelled() == 1; }));
}

TEST_F(CurlTest, ARetryableRouteIsRetriedAndTheFailedAnswerNeverReachesTheApp) {
  H2TestServer& failing = AddServer(Named("failing", 503));
  H2TestServer& good = AddServer(Named("good"));
  SetEndpoints({&failing, &good});
  auto channel = NewChannel();
  ServiceConfig config;
  Route route;
  route.name = "books";
  route.condition = RequestMatch::PathPrefix("/books/");
  route.is_retryable = true;
  config.routes.push_back(route);
  config.retry_budget = RetryBudget{};
  config.retry_budget->min_retries_per_second = 1000;
  mesh_.Configure(*channel, kTarget, config);
  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);
  int retried = 0;
  for (int i = 0; i < 20; ++i) {
    body.clear();
    headers.clear();
    curl::Result r =
        curl::Perform(*channel, easy.get(), RequestFor(&body, &headers));
    ASSERT_EQ(r.code, CURLE_OK) << r.status;
    EXPECT_EQ(r.http_status, 200);
    EXPECT_EQ(r.endpoint, good.address());
    // Only the answer that counted reached the callbacks.
    EXPECT_EQ(body, "good");
    EXPECT_THAT(headers, HasSubstr("x-server: good"));
    EXPECT_THAT(headers, ::testing::Not(HasSubstr("failing")));
    if (r.attempts > 1) ++retried;
    long code = 0;
    curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &code);
    EXPECT_EQ(code, 200);
  }
  EXPECT_GT(retried, 0);
  EXPECT_EQ(failing.requests(), retried);
}

TEST_F(CurlTest, ANonRetryableRouteHandsTheFailureToTheApp) {
  H2TestServer& failing = AddServer(Named("failing", 503));
  SetEndpoints({&failing});
  auto channel = NewChannel();
  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);
  curl::Result r =
      curl::Perform(*channel, easy.get(), RequestFor(&body, &headers));
  EXPECT_EQ(r.code, CURLE_OK);
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(r.http_status, 503);
  EXPECT_EQ(r.attempts, 1u);
  EXPECT_EQ(body, "failing");
  EXPECT_EQ(failing.requests(), 1);
}

}  // namespace
}  // namespace mesh
