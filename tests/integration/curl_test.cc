// mesh::curl end to end: the application's own libcurl easy handles sent
// through a Mesh to real HTTP/2 servers on 127.0.0.1 (H2TestServer, built on
// libnghttp2): spreading, discovery, a slow endpoint, timeouts, retries and
// what may not be retried, a failing endpoint ejected, headers and a 1 MB
// body both ways, the application's callbacks, cancellation, HTTP/2 with one
// connection per endpoint, and the handle's options put back.
#include "mesh/curl.h"

#include <curl/curl.h>

#include <cstring>
#include <functional>
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
#include "tests/support/prometheus_text.h"
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
    EXPECT_THAT(s->requests(), Gt(0)) << s->address();
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

// A route that retries every failure, with a budget that allows it.
ServiceConfig RetryingConfig() {
  ServiceConfig config;
  Route route;
  route.name = "books";
  route.condition = RequestMatch::PathPrefix("/books/");
  route.is_retryable = true;
  route.retry_policy.max_attempts = 3;
  config.routes.push_back(route);
  config.retry_budget = RetryBudget{};
  config.retry_budget->min_retries_per_second = 1000;
  return config;
}

// A body read by a callback from a string, with a seek that rewinds it.
struct ReadBody {
  std::string text;
  size_t offset = 0;
  static size_t Read(char* out, size_t size, size_t count, void* self) {
    auto* b = static_cast<ReadBody*>(self);
    const size_t n = std::min(size * count, b->text.size() - b->offset);
    memcpy(out, b->text.data() + b->offset, n);
    b->offset += n;
    return n;
  }
  static int Seek(void* self, curl_off_t offset, int origin) {
    if (origin != SEEK_SET) return CURL_SEEKFUNC_CANTSEEK;
    static_cast<ReadBody*>(self)->offset = static_cast<size_t>(offset);
    return CURL_SEEKFUNC_OK;
  }
};

TEST_F(CurlTest, ABodyReadOnceIsNotRetriedOneThatRewindsOrIsABufferIs) {
  H2TestServer& failing = AddServer(Named("failing", 503));
  SetEndpoints({&failing});
  auto channel = NewChannel();
  mesh_.Configure(*channel, kTarget, RetryingConfig());
  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);

  // A read callback mesh cannot rewind: one attempt, the 503 handed on.
  ReadBody once{"once-body"};
  curl_easy_setopt(easy.get(), CURLOPT_POST, 1L);
  curl_easy_setopt(easy.get(), CURLOPT_READFUNCTION, &ReadBody::Read);
  curl_easy_setopt(easy.get(), CURLOPT_READDATA, &once);
  curl_easy_setopt(easy.get(), CURLOPT_POSTFIELDSIZE, 9L);
  curl::Request request = RequestFor(&body, &headers);
  request.method = "POST";
  curl::Result r = curl::Perform(*channel, easy.get(), request);
  EXPECT_EQ(r.http_status, 503);
  EXPECT_EQ(r.attempts, 1u);
  EXPECT_EQ(failing.requests(), 1);

  // The same callback with its seek: every attempt sends the whole body.
  ReadBody rewinding{"rewinding-body"};
  curl_easy_setopt(easy.get(), CURLOPT_READDATA, &rewinding);
  curl_easy_setopt(easy.get(), CURLOPT_POSTFIELDSIZE, 14L);
  request.body = curl::Request::Body::kRewind;
  request.seek = &ReadBody::Seek;
  request.seek_data = &rewinding;
  r = curl::Perform(*channel, easy.get(), request);
  EXPECT_EQ(r.http_status, 503);
  EXPECT_EQ(r.attempts, 3u);

  // A buffer: curl sends it again itself.
  curl_easy_setopt(easy.get(), CURLOPT_POSTFIELDSIZE, -1L);
  curl_easy_setopt(easy.get(), CURLOPT_POSTFIELDS, "buffer-body");
  request.body = curl::Request::Body::kBuffer;
  request.seek = nullptr;
  r = curl::Perform(*channel, easy.get(), request);
  EXPECT_EQ(r.attempts, 3u);

  std::vector<H2TestServer::Request> seen = failing.received();
  ASSERT_EQ(seen.size(), 7u);
  EXPECT_EQ(seen[0].body, "once-body");
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(seen[i].body, "rewinding-body");
  for (int i = 4; i <= 6; ++i) EXPECT_EQ(seen[i].body, "buffer-body");
  for (const H2TestServer::Request& q : seen) EXPECT_EQ(q.method, "POST");
}

TEST_F(CurlTest, WithoutTheAppsCallbacksAnAnsweredAttemptIsNotRetried) {
  H2TestServer& failing = AddServer(Named("failing", 503));
  SetEndpoints({&failing});
  auto channel = NewChannel();
  mesh_.Configure(*channel, kTarget, RetryingConfig());
  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);
  // The handle keeps its own callbacks: mesh does not touch them, so the
  // answer reached the app as it came and may not be retried.
  curl::Result r = curl::Perform(*channel, easy.get());
  EXPECT_EQ(r.code, CURLE_OK);
  EXPECT_EQ(r.http_status, 503);
  EXPECT_EQ(r.attempts, 1u);
  EXPECT_EQ(body, "failing");
  EXPECT_THAT(headers, HasSubstr("x-server: failing"));
}

TEST_F(CurlTest, AFailingEndpointIsEjected) {
  H2TestServer& failing = AddServer(Named("failing", 500));
  H2TestServer& good = AddServer(Named("good"));
  SetEndpoints({&failing, &good});
  ChannelOptions options;
  options.balancer.ejection_consecutive_failures = 3;
  auto channel = NewChannel(options);
  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);
  for (int i = 0; i < 60; ++i) {
    curl::Perform(*channel, easy.get(), RequestFor(&body, &headers));
  }
  // Three failures in a row eject it: it got no more.
  EXPECT_EQ(failing.requests(), 3);
  EXPECT_EQ(good.requests(), 57);
  bool ejected = false;
  for (const EndpointStats& s : channel->EndpointStatsSnapshot()) {
    if (s.address == failing.address()) ejected = s.ejected;
  }
  EXPECT_TRUE(ejected);
}

// A server that echoes the request's body and names its headers in its own.
H2TestServer::Response Echo(const H2TestServer::Request& request) {
  H2TestServer::Response out;
  out.body = request.body;
  for (const auto& [name, value] : request.headers) {
    out.headers.emplace_back("echo-" + name, value);
  }
  return out;
}

TEST_F(CurlTest, HeadersAndAMegabyteBodyArriveIntactBothWays) {
  H2TestServer& echo = AddServer(&Echo);
  SetEndpoints({&echo});
  auto channel = NewChannel();
  std::string big(1 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) {
    big[i] = static_cast<char>((i * 2654435761u) >> 13);
  }
  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);
  curl_slist* list = curl_slist_append(nullptr, "X-Trace: abc 123");
  list = curl_slist_append(list, "Accept:");  // curl leaves its own out
  curl_easy_setopt(easy.get(), CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(easy.get(), CURLOPT_POSTFIELDS, big.data());
  curl_easy_setopt(easy.get(), CURLOPT_POSTFIELDSIZE_LARGE,
                   static_cast<curl_off_t>(big.size()));
  curl::Request request = RequestFor(&body, &headers);
  request.headers = list;
  request.method = "POST";
  request.body = curl::Request::Body::kBuffer;
  curl::Result r = curl::Perform(*channel, easy.get(), request);
  ASSERT_EQ(r.code, CURLE_OK) << r.status;
  EXPECT_EQ(r.http_status, 200);
  EXPECT_TRUE(body == big) << body.size();
  EXPECT_THAT(headers, HasSubstr("echo-x-trace: abc 123"));
  EXPECT_THAT(headers, ::testing::Not(HasSubstr("echo-accept")));
  H2TestServer::Request seen = echo.received().front();
  EXPECT_TRUE(seen.body == big) << seen.body.size();
  EXPECT_EQ(seen.Header("x-trace"), "abc 123");
  EXPECT_EQ(seen.Header("accept"), "");
  curl_slist_free_all(list);
}

TEST_F(CurlTest, TheRoutesHeaderMatchAndModifierApplyAndTheAppsListComesBack) {
  H2TestServer& echo = AddServer(&Echo);
  SetEndpoints({&echo});
  auto channel = NewChannel();
  ServiceConfig config;
  Route tagged;
  tagged.name = "tagged";
  HeaderMatch tenant;
  tenant.name = "x-tenant";
  tenant.value = "blue";
  tagged.condition = RequestMatch::All(
      {RequestMatch::Method("DELETE"), RequestMatch::Header(tenant)});
  tagged.request_headers.set = {{"x-route", "tagged"}};
  tagged.request_headers.remove = {"x-secret"};
  config.routes.push_back(tagged);
  mesh_.Configure(*channel, kTarget, config);

  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);
  curl_slist* list = curl_slist_append(nullptr, "X-Tenant: blue");
  list = curl_slist_append(list, "X-Secret: s3");
  curl_easy_setopt(easy.get(), CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(easy.get(), CURLOPT_CUSTOMREQUEST, "DELETE");
  curl::Request request = RequestFor(&body, &headers);
  request.headers = list;
  curl::Result r = curl::Perform(*channel, easy.get(), request);
  ASSERT_EQ(r.http_status, 200) << r.status;
  // A GET does not match the route: the app's own headers go out.
  curl_easy_setopt(easy.get(), CURLOPT_CUSTOMREQUEST, nullptr);
  r = curl::Perform(*channel, easy.get(), request);
  ASSERT_EQ(r.http_status, 200) << r.status;
  std::vector<H2TestServer::Request> seen = echo.received();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].method, "DELETE");
  EXPECT_EQ(seen[0].Header("x-route"), "tagged");
  EXPECT_EQ(seen[0].Header("x-secret"), "");
  EXPECT_EQ(seen[0].Header("x-tenant"), "blue");
  EXPECT_EQ(seen[1].method, "GET");
  EXPECT_EQ(seen[1].Header("x-route"), "");
  EXPECT_EQ(seen[1].Header("x-secret"), "s3");
  curl_slist_free_all(list);
}

TEST_F(CurlTest, TheHandlesOptionsComeBackAfterwards) {
  H2TestServer& a = AddServer(Named("a"));
  H2TestServer& other = AddServer(Named("other"));
  SetEndpoints({&a});
  auto channel = NewChannel();
  // A retryable route: mesh puts its own callbacks on the handle.
  mesh_.Configure(*channel, kTarget, RetryingConfig());
  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);
  curl::Result r =
      curl::Perform(*channel, easy.get(), RequestFor(&body, &headers));
  ASSERT_EQ(r.http_status, 200);
  // Straight to another server with curl alone: a CONNECT_TO left behind
  // would send it to `a`, and mesh's callbacks left behind would not pass
  // the answer on to the app's.
  body.clear();
  headers.clear();
  curl_easy_setopt(easy.get(), CURLOPT_URL,
                   absl::StrCat("http://", other.address(), "/direct").c_str());
  curl_easy_setopt(easy.get(), CURLOPT_HTTP_VERSION,
                   CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  ASSERT_EQ(curl_easy_perform(easy.get()), CURLE_OK);
  EXPECT_EQ(body, "other");
  EXPECT_THAT(headers, HasSubstr("x-server: other"));
  EXPECT_EQ(other.requests(), 1);
  EXPECT_EQ(a.requests(), 1);
}

TEST_F(CurlTest, ADestinationWithoutEndpointsFailsAsCouldNotConnect) {
  ASSERT_TRUE(mesh_.discovery->SetEndpoints(kTarget, {}).ok());
  ChannelOptions options;
  options.fail_fast_timeout = absl::Milliseconds(100);
  auto channel = NewChannel(options);
  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);
  curl::Result r =
      curl::Perform(*channel, easy.get(), RequestFor(&body, &headers));
  EXPECT_EQ(r.code, CURLE_COULDNT_CONNECT);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(r.status.message()), HasSubstr(kTarget));
  EXPECT_EQ(r.attempts, 0u);
}

TEST_F(CurlTest, ARequestMeshCannotSendIsRefusedNamingWhy) {
  H2TestServer& a = AddServer(Named("a"));
  SetEndpoints({&a});
  auto channel = NewChannel();
  std::string body, headers;
  Easy easy = NewEasy("ftp://books:7001/file", &body, &headers);
  curl::Result r =
      curl::Perform(*channel, easy.get(), RequestFor(&body, &headers));
  EXPECT_EQ(r.code, CURLE_BAD_FUNCTION_ARGUMENT);
  EXPECT_THAT(std::string(r.status.message()), HasSubstr("not http or https"));

  Easy good = NewEasy(kUrl, &body, &headers);
  curl_slist* list = curl_slist_append(nullptr, ": no name");
  curl::Request request = RequestFor(&body, &headers);
  request.headers = list;
  r = curl::Perform(*channel, good.get(), request);
  EXPECT_EQ(r.code, CURLE_BAD_FUNCTION_ARGUMENT);
  EXPECT_THAT(std::string(r.status.message()), HasSubstr("has no name"));
  request.headers = nullptr;
  request.method = "BAD METHOD";
  r = curl::Perform(*channel, good.get(), request);
  EXPECT_EQ(r.code, CURLE_BAD_FUNCTION_ARGUMENT);
  EXPECT_THAT(std::string(r.status.message()), HasSubstr("not a token"));
  EXPECT_EQ(a.requests(), 0);
  curl_slist_free_all(list);
}

TEST_F(CurlTest, CancellingEndsTheRequestAndTheServerSeesIt) {
  H2TestServer& a = AddServer(Named("a", 200, absl::Seconds(10)));
  SetEndpoints({&a});
  auto channel = NewChannel();
  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);
  curl::Request request = RequestFor(&body, &headers);
  request.cancel = std::make_shared<Cancellation>();
  std::thread canceller([&] {
    testing::WaitFor([&] { return a.requests() == 1; });
    request.cancel->Cancel();
  });
  const absl::Time start = absl::Now();
  curl::Result r = curl::Perform(*channel, easy.get(), request);
  canceller.join();
  EXPECT_EQ(r.code, CURLE_ABORTED_BY_CALLBACK);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kCancelled) << r.status;
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_TRUE(testing::WaitFor([&] { return a.cancelled() == 1; }));
}

TEST_F(CurlTest, AMultiKeepsEightInFlightOverOneConnectionPerEndpoint) {
  H2TestServer& a = AddServer(Named("a", 200, absl::Milliseconds(5)));
  H2TestServer& b = AddServer(Named("b", 200, absl::Milliseconds(5)));
  SetEndpoints({&a, &b});
  auto channel = NewChannel();
  constexpr int kHandles = 8;
  constexpr int kRequests = 96;
  std::vector<Easy> handles;
  std::vector<std::string> bodies(kHandles), headers(kHandles);
  for (int i = 0; i < kHandles; ++i) {
    handles.push_back(NewEasy(kUrl, &bodies[i], &headers[i]));
  }
  curl::Multi multi;
  int started = 0, ok = 0;
  std::function<void(int)> start = [&](int i) {
    bodies[i].clear();
    ++started;
    multi.Add(*channel, handles[i].get(), RequestFor(&bodies[i], &headers[i]),
              [&, i](curl::Result r) {
                if (r.http_status == 200 && bodies[i].size() == 1) ++ok;
                if (started < kRequests) start(i);
              });
  };
  for (int i = 0; i < kHandles; ++i) start(i);
  const absl::Time until = absl::Now() + absl::Seconds(30);
  while (multi.in_flight() > 0 && absl::Now() < until) {
    multi.Poll(absl::Seconds(1));
  }
  EXPECT_EQ(ok, kRequests);
  EXPECT_EQ(a.requests() + b.requests(), kRequests);
  EXPECT_EQ(a.connections(), 1);
  EXPECT_EQ(b.connections(), 1);
}

TEST_F(CurlTest, TapSeesTheRequestsLiveAndMetricsCountThem) {
  H2TestServer& failing = AddServer(Named("failing", 503));
  H2TestServer& good = AddServer(Named("good"));
  SetEndpoints({&failing, &good});
  auto channel = NewChannel();
  mesh_.Configure(*channel, kTarget, RetryingConfig());
  TapOptions tap;
  tap.match = TapMatch::PathPrefix("/books/");
  tap.extract_headers = true;
  absl::StatusOr<std::unique_ptr<TapSubscription>> sub = mesh_.mesh->Tap(tap);
  ASSERT_TRUE(sub.ok()) << sub.status();

  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);
  curl_slist* list = curl_slist_append(nullptr, "Authorization: Bearer s3");
  curl_easy_setopt(easy.get(), CURLOPT_HTTPHEADER, list);
  curl::Request request = RequestFor(&body, &headers);
  request.headers = list;
  // Until one request went to the failing endpoint first and was retried.
  curl::Result r;
  for (int i = 0; i < 50 && r.attempts < 2; ++i) {
    r = curl::Perform(*channel, easy.get(), request);
    ASSERT_EQ(r.http_status, 200) << r.status;
  }
  ASSERT_EQ(r.attempts, 2u);
  Easy other = NewEasy("http://books:7001/other", &body, &headers);
  curl::Perform(*channel, other.get(), RequestFor(&body, &headers));

  // Every attempt of the /books/ requests, and nothing of /other.
  int inits = 0, failed = 0, ok = 0;
  while (std::optional<TapEvent> e = (*sub)->Next(absl::Milliseconds(200))) {
    EXPECT_EQ(e->path, e->kind == TapEvent::Kind::kRequestInit
                           ? std::string("/books/1?x=1")
                           : e->path);
    if (e->kind == TapEvent::Kind::kRequestInit) {
      ++inits;
      EXPECT_EQ(e->method, "GET");
      EXPECT_EQ(e->scheme, "http");
      EXPECT_EQ(e->authority, "books:7001");
      EXPECT_THAT(e->headers, ::testing::Contains(::testing::Pair(
                                  "authorization", kTapRedacted)));
      EXPECT_EQ(e->route_labels["route"], "books");
    } else if (e->kind == TapEvent::Kind::kResponseInit) {
      EXPECT_THAT(e->headers, ::testing::Contains(
                                  ::testing::Pair(":status", ::testing::_)));
    } else {
      EXPECT_FALSE(e->grpc_status.has_value());
      EXPECT_EQ(e->response_bytes, e->destination == good.address()
                                       ? std::string("good").size()
                                       : std::string("failing").size());
      (e->destination == good.address() ? ok : failed)++;
    }
  }
  EXPECT_EQ(inits, ok + failed);
  EXPECT_GE(failed, 1);
  int failing_books = 0;
  for (const H2TestServer::Request& q : failing.received()) {
    failing_books += q.path == "/books/1?x=1";
  }
  EXPECT_EQ(failed, failing_books);

  absl::StatusOr<testing::PrometheusText> metrics =
      testing::ParsePrometheusText(mesh_.mesh->Metrics());
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(metrics->Value("route_http_response_total",
                           {{"route", "books"}, {"status_class", "2xx"}}),
            static_cast<double>(ok));
  EXPECT_EQ(metrics->Value("route_retry_total", {{"route", "books"}}),
            static_cast<double>(failed));
  curl_slist_free_all(list);
}

TEST_F(CurlTest, AnEndpointWithClusterTlsIsRefusedNotCalledInPlaintext) {
  H2TestServer& a = AddServer(Named("a"));
  Endpoint e(a.address());
  e.protocol_hint = ProtocolHint::kHttp2;
  auto tls = std::make_shared<EndpointTls>();
  tls->certificates.trust_roots_pem = "roots";
  e.tls = tls;
  ASSERT_TRUE(mesh_.discovery->SetEndpoints(kTarget, {e}).ok());
  auto channel = NewChannel();
  std::string body, headers;
  Easy easy = NewEasy(kUrl, &body, &headers);
  curl::Result r =
      curl::Perform(*channel, easy.get(), RequestFor(&body, &headers));
  EXPECT_EQ(r.code, CURLE_COULDNT_CONNECT);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(r.status.message()),
              HasSubstr("refusing to send in plaintext"));
  EXPECT_EQ(r.attempts, 1u);
  EXPECT_EQ(a.requests(), 0);
  EXPECT_EQ(a.connections(), 0);
}

TEST_F(CurlTest, ADestinationOutsideTheMeshIsRefusedOrPassedThroughByChoice) {
  H2TestServer& outside = AddServer(Named("outside"));
  ASSERT_TRUE(mesh_.discovery
                  ->Update("outside:80", EndpointUpdate::NoEndpoints(
                                             /*exists=*/false, "not meshed"))
                  .ok());
  auto channel = mesh_.mesh->NewChannel("outside:80");
  ASSERT_TRUE(channel.ok());
  std::string body, headers;
  // The application's own handle reaches the server itself.
  Easy easy = NewEasy(absl::StrCat("http://", outside.address(), "/direct"),
                      &body, &headers);
  curl_easy_setopt(easy.get(), CURLOPT_HTTP_VERSION,
                   CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  curl::Request request = RequestFor(&body, &headers);
  curl::Result r = curl::Perform(**channel, easy.get(), request);
  EXPECT_EQ(r.code, CURLE_COULDNT_CONNECT);
  EXPECT_THAT(std::string(r.status.message()), HasSubstr("does not exist"));
  EXPECT_EQ(outside.requests(), 0);

  request.pass_through_unknown = true;
  r = curl::Perform(**channel, easy.get(), request);
  ASSERT_EQ(r.code, CURLE_OK) << r.status;
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(body, "outside");
  EXPECT_EQ(outside.requests(), 1);
  EXPECT_EQ(outside.received().front().path, "/direct");
}

TEST_F(CurlTest, DestroyingAMultiCancelsWhatIsInFlightAndRunsEveryDone) {
  H2TestServer& slow = AddServer(Named("slow", 200, absl::Seconds(10)));
  SetEndpoints({&slow});
  auto channel = NewChannel();
  std::vector<std::string> bodies(3), headers(3);
  std::vector<Easy> handles;
  for (int i = 0; i < 3; ++i) {
    handles.push_back(NewEasy(kUrl, &bodies[i], &headers[i]));
  }
  std::vector<curl::Result> results;
  const absl::Time start = absl::Now();
  {
    curl::Multi multi;
    for (int i = 0; i < 3; ++i) {
      curl::Request request = RequestFor(&bodies[i], &headers[i]);
      // One with a cancellation of the application's, which stays unraised.
      if (i == 2) request.cancel = std::make_shared<Cancellation>();
      multi.Add(*channel, handles[i].get(), request,
                [&](curl::Result r) { results.push_back(std::move(r)); });
    }
    const absl::Time until = absl::Now() + absl::Seconds(10);
    while (slow.requests() < 3 && absl::Now() < until) {
      multi.Poll(absl::Milliseconds(20));
    }
    ASSERT_EQ(slow.requests(), 3);
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  ASSERT_EQ(results.size(), 3u);
  for (const curl::Result& r : results) {
    EXPECT_EQ(r.code, CURLE_ABORTED_BY_CALLBACK);
    EXPECT_EQ(r.status.code(), absl::StatusCode::kCancelled) << r.status;
  }
  EXPECT_TRUE(testing::WaitFor([&] { return slow.cancelled() == 3; }));
}

}  // namespace
}  // namespace mesh
