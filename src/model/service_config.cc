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

}  // namespace mesh
