// What mesh::curl reads of a request from the application's easy handle and
// its Request (method, URL parts, headers, whether the body can be resent),
// the header list an attempt sends when a route edits headers, and which
// answers an attempt holds back because they may be retried.
#include "src/curl/curl_request.h"

#include <curl/curl.h>

#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/channel/external_call.h"

namespace mesh::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

struct EasyDeleter {
  void operator()(CURL* e) const { curl_easy_cleanup(e); }
};

class CurlRequestTest : public ::testing::Test {
 protected:
  CurlRequestHead Read(const std::string& url, curl::Request request = {}) {
    curl_easy_setopt(easy_.get(), CURLOPT_URL, url.c_str());
    CurlRequestHead head;
    absl::Status s = ReadCurlRequest(easy_.get(), request, &head);
    EXPECT_TRUE(s.ok()) << s;
    return head;
  }
  absl::Status Refused(const std::string& url, curl::Request request = {}) {
    if (!url.empty()) curl_easy_setopt(easy_.get(), CURLOPT_URL, url.c_str());
    CurlRequestHead head;
    return ReadCurlRequest(easy_.get(), request, &head);
  }
  std::unique_ptr<CURL, EasyDeleter> easy_{curl_easy_init()};
};

TEST_F(CurlRequestTest, ReadsTheUrlsParts) {
  CurlRequestHead h = Read("http://books:7001/shelf/1?x=1&y=2");
  EXPECT_EQ(h.scheme, "http");
  EXPECT_EQ(h.host, "books");
  EXPECT_EQ(h.port, "7001");
  EXPECT_EQ(h.authority, "books:7001");
  EXPECT_EQ(h.path, "/shelf/1?x=1&y=2");
  EXPECT_EQ(h.method, "GET");
  // The same authority again (the cached parse), another path.
  h = Read("http://books:7001/other");
  EXPECT_EQ(h.authority, "books:7001");
  EXPECT_EQ(h.path, "/other");
  h = Read("HTTPS://api.example/v1");
  EXPECT_EQ(h.scheme, "https");
  EXPECT_EQ(h.port, "");
  EXPECT_EQ(h.authority, "api.example");
}

TEST_F(CurlRequestTest, ThePathIsWhatCurlSends) {
  EXPECT_EQ(Read("http://books:7001").path, "/");
  EXPECT_EQ(Read("http://books:7001?q=1").path, "/?q=1");
  EXPECT_EQ(Read("http://books:7001/a/#frag").path, "/a/");
  EXPECT_EQ(Read("http://books:7001/a/../b/./c").path, "/b/c");
}

TEST_F(CurlRequestTest, TheMethodComesFromTheRequestOrCustomRequest) {
  EXPECT_EQ(Read("http://b:1/").method, "GET");
  curl_easy_setopt(easy_.get(), CURLOPT_CUSTOMREQUEST, "DELETE");
  EXPECT_EQ(Read("http://b:1/").method, "DELETE");
  curl::Request r;
  r.method = "POST";
  EXPECT_EQ(Read("http://b:1/", r).method, "POST");
}

TEST_F(CurlRequestTest, HeaderLinesBecomeLowerCaseHeadersAndDirectives) {
  curl_slist* list = curl_slist_append(nullptr, "X-Trace:  abc ");
  list = curl_slist_append(list, "Accept:");
  list = curl_slist_append(list, "X-Empty;");
  curl::Request r;
  r.headers = list;
  CurlRequestHead h = Read("http://b:1/", r);
  EXPECT_THAT(h.headers,
              ElementsAre(Pair("x-trace", "abc"), Pair("x-empty", "")));
  EXPECT_THAT(h.curl_directives, ElementsAre("Accept:"));
  curl_slist* built =
      BuildHeaderList(h.curl_directives,
                      {{"x-trace", "abc"}, {"x-empty", ""}, {"x-route", "r1"}});
  std::vector<std::string> lines;
  for (curl_slist* l = built; l != nullptr; l = l->next)
    lines.push_back(l->data);
  EXPECT_THAT(
      lines, ElementsAre("Accept:", "x-trace: abc", "x-empty;", "x-route: r1"));
  curl_slist_free_all(built);
  curl_slist_free_all(list);
}

TEST_F(CurlRequestTest, WhetherTheBodyCanBeSentAgain) {
  using Body = curl::Request::Body;
  curl::Request r;
  EXPECT_TRUE(Read("http://b:1/", r).replayable);  // GET: no body
  r.method = "POST";
  EXPECT_FALSE(Read("http://b:1/", r).replayable);  // a body of unknown kind
  r.body = Body::kBuffer;
  EXPECT_TRUE(Read("http://b:1/", r).replayable);
  r.body = Body::kOnce;
  EXPECT_FALSE(Read("http://b:1/", r).replayable);
  r.body = Body::kRewind;
  EXPECT_THAT(std::string(Refused("http://b:1/", r).message()),
              HasSubstr("Request::seek is null"));
  r.seek = [](void*, curl_off_t, int) { return CURL_SEEKFUNC_OK; };
  EXPECT_TRUE(Read("http://b:1/", r).replayable);
}

TEST_F(CurlRequestTest, WhatMeshCannotSendIsRefusedNamingIt) {
  EXPECT_THAT(std::string(Refused("").message()), HasSubstr("no CURLOPT_URL"));
  EXPECT_THAT(std::string(Refused("ftp://b:1/f").message()),
              HasSubstr("is not http or https"));
  curl_slist* list = curl_slist_append(nullptr, ": value");
  curl::Request r;
  r.headers = list;
  EXPECT_THAT(std::string(Refused("http://b:1/", r).message()),
              HasSubstr("has no name"));
  curl_slist_free_all(list);
}

TEST(AttemptRetryHintTest, SaysWhichAnswersMayBeRetried) {
  AttemptRetryHint hint;
  EXPECT_FALSE(hint.MayRetry(503));  // the call may not be retried at all
  hint.may_retry = true;
  EXPECT_TRUE(hint.MayRetry(503));  // 5xx: a failure by default
  EXPECT_FALSE(hint.MayRetry(200));
  EXPECT_FALSE(hint.MayRetry(404));
  std::vector<ResponseClass> classes(1);
  classes[0].condition.kind = ResponseMatch::Kind::kStatus;
  classes[0].condition.min = 400;
  classes[0].condition.max = 499;
  classes[0].is_failure = true;
  hint.response_classes = &classes;
  EXPECT_TRUE(hint.MayRetry(404));  // the route's classes say so
  std::vector<HttpStatusRange> ranges = {{429, 429}};
  hint.retry_on_http_status = &ranges;
  EXPECT_TRUE(hint.MayRetry(429));  // a route retrying by status: those only
  EXPECT_FALSE(hint.MayRetry(503));
  std::vector<absl::StatusCode> codes = {absl::StatusCode::kUnavailable};
  hint.retry_on = &codes;  // by gRPC code: never an HTTP answer
  EXPECT_FALSE(hint.MayRetry(429));
}

}  // namespace
}  // namespace mesh::internal
