#include "mesh/service_config.h"

#include <utility>

namespace mesh {

RequestMatch RequestMatch::All(std::vector<RequestMatch> children) {
  RequestMatch m;
  m.kind = Kind::kAll;
  m.children = std::move(children);
  return m;
}

RequestMatch RequestMatch::Any(std::vector<RequestMatch> children) {
  RequestMatch m;
  m.kind = Kind::kAny;
  m.children = std::move(children);
  return m;
}

RequestMatch RequestMatch::Not(RequestMatch child) {
  RequestMatch m;
  m.kind = Kind::kNot;
  m.children.push_back(std::move(child));
  return m;
}

RequestMatch RequestMatch::Path(std::string regex) {
  RequestMatch m;
  m.kind = Kind::kPath;
  m.path_regex = std::move(regex);
  return m;
}

RequestMatch RequestMatch::Method(std::string method) {
  RequestMatch m;
  m.kind = Kind::kMethod;
  m.method = std::move(method);
  return m;
}

RequestMatch RequestMatch::Header(HeaderMatch header) {
  RequestMatch m;
  m.kind = Kind::kHeader;
  m.header = std::move(header);
  return m;
}

RequestMatch RequestMatch::PathPrefix(std::string prefix, bool case_sensitive) {
  RequestMatch m;
  m.kind = Kind::kPathPrefix;
  m.path = std::move(prefix);
  m.case_sensitive = case_sensitive;
  return m;
}

RequestMatch RequestMatch::PathExact(std::string path, bool case_sensitive) {
  RequestMatch m;
  m.kind = Kind::kPathExact;
  m.path = std::move(path);
  m.case_sensitive = case_sensitive;
  return m;
}

RequestMatch RequestMatch::QueryParam(HeaderMatch param) {
  RequestMatch m;
  m.kind = Kind::kQueryParam;
  m.header = std::move(param);
  return m;
}

RequestMatch RequestMatch::Fraction(uint32_t per_million) {
  RequestMatch m;
  m.kind = Kind::kFraction;
  m.per_million = per_million;
  return m;
}

ResponseMatch ResponseMatch::All(std::vector<ResponseMatch> children) {
  ResponseMatch m;
  m.kind = Kind::kAll;
  m.children = std::move(children);
  return m;
}

ResponseMatch ResponseMatch::Any(std::vector<ResponseMatch> children) {
  ResponseMatch m;
  m.kind = Kind::kAny;
  m.children = std::move(children);
  return m;
}

ResponseMatch ResponseMatch::Not(ResponseMatch child) {
  ResponseMatch m;
  m.kind = Kind::kNot;
  m.children.push_back(std::move(child));
  return m;
}

ResponseMatch ResponseMatch::Status(uint32_t min, uint32_t max) {
  ResponseMatch m;
  m.kind = Kind::kStatus;
  m.min = min;
  m.max = max;
  return m;
}

RouteBuilder::RouteBuilder(std::string name) { route_.name = std::move(name); }

RouteBuilder& RouteBuilder::Path(std::string regex) {
  return When(RequestMatch::Path(std::move(regex)));
}

RouteBuilder& RouteBuilder::GrpcMethod(const std::string& service,
                                       const std::string& method) {
  std::string regex = "/";
  for (const std::string* part : {&service, &method}) {
    for (char c : *part) {
      bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                   (c >= '0' && c <= '9') || c == '_';
      if (!plain) regex += '\\';
      regex += c;
    }
    if (part == &service) regex += '/';
  }
  return When(RequestMatch::Path(std::move(regex)));
}

RouteBuilder& RouteBuilder::HttpMethod(std::string method) {
  return When(RequestMatch::Method(std::move(method)));
}

RouteBuilder& RouteBuilder::Header(HeaderMatch header) {
  return When(RequestMatch::Header(std::move(header)));
}

RouteBuilder& RouteBuilder::When(RequestMatch condition) {
  conditions_.push_back(std::move(condition));
  return *this;
}

RouteBuilder& RouteBuilder::Timeout(absl::Duration timeout) {
  route_.timeout = timeout;
  return *this;
}

RouteBuilder& RouteBuilder::Retryable(RetryPolicy policy) {
  route_.is_retryable = true;
  route_.retry_policy = policy;
  return *this;
}

RouteBuilder& RouteBuilder::Hedged(HedgePolicy policy) {
  route_.hedge_policy = std::move(policy);
  return *this;
}

RouteBuilder& RouteBuilder::Classify(ResponseMatch condition, bool is_failure) {
  route_.response_classes.push_back(
      ResponseClass{std::move(condition), is_failure});
  return *this;
}

RouteBuilder& RouteBuilder::Label(std::string key, std::string value) {
  route_.metrics_labels[std::move(key)] = std::move(value);
  return *this;
}

Route RouteBuilder::Build() const {
  Route route = route_;
  route.condition =
      conditions_.size() == 1 ? conditions_[0] : RequestMatch::All(conditions_);
  return route;
}

}  // namespace mesh
