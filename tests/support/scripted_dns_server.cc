#include "tests/support/scripted_dns_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace mesh::testing {
namespace {

using internal::MutexLock;

constexpr size_t kHeaderSize = 12;
constexpr size_t kMaxUdpMessage = 512;  // RFC 1035 4.2.1, without EDNS
constexpr uint16_t kClassIn = 1;
constexpr int kFormErr = 1;
constexpr int kNxDomain = 3;

// The key a name is scripted and counted under: lower case, no final dot.
std::string Canonical(std::string name) {
  if (!name.empty() && name.back() == '.') name.pop_back();
  return absl::AsciiStrToLower(name);
}

void PutU16(std::string* out, uint16_t v) {
  out->push_back(static_cast<char>(v >> 8));
  out->push_back(static_cast<char>(v & 0xff));
}

void PutU32(std::string* out, uint32_t v) {
  PutU16(out, static_cast<uint16_t>(v >> 16));
  PutU16(out, static_cast<uint16_t>(v & 0xffff));
}

uint16_t GetU16(const std::string& in, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(in[at]) << 8 |
                               static_cast<uint8_t>(in[at + 1]));
}

// RFC 1035 3.1: labels of 1 to 63 bytes, 255 bytes in all on the wire.
absl::Status CheckName(const std::string& name) {
  const std::string n = Canonical(name);
  if (n.empty() || n.size() > 253) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad DNS name '", name, "'"));
  }
  for (absl::string_view label : absl::StrSplit(n, '.')) {
    if (label.empty() || label.size() > 63) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad DNS name '", name, "'"));
    }
  }
  return absl::OkStatus();
}

// The name as labels, uncompressed.
void PutName(std::string* out, const std::string& name) {
  for (absl::string_view label : absl::StrSplit(Canonical(name), '.')) {
    out->push_back(static_cast<char>(label.size()));
    out->append(label.data(), label.size());
  }
  out->push_back('\0');
}

// The record's RDATA; false if its data does not fit its type.
bool RecordData(const DnsRecord& r, std::string* out) {
  out->clear();
  switch (r.type) {
    case DnsType::kA: {
      in_addr a;
      if (inet_pton(AF_INET, r.data.c_str(), &a) != 1) return false;
      out->assign(reinterpret_cast<const char*>(&a), sizeof(a));
      return true;
    }
    case DnsType::kAaaa: {
      in6_addr a;
      if (inet_pton(AF_INET6, r.data.c_str(), &a) != 1) return false;
      out->assign(reinterpret_cast<const char*>(&a), sizeof(a));
      return true;
    }
    case DnsType::kCname:
      if (!CheckName(r.data).ok()) return false;
      PutName(out, r.data);
      return true;
  }
  return false;
}

// The question's name (text, lower case) and where the question ends;
// false if the query holds no well-formed uncompressed question.
bool ReadQuestion(const std::string& query, std::string* name, size_t* end) {
  size_t at = kHeaderSize;
  name->clear();
  for (;;) {
    if (at >= query.size()) return false;
    const size_t len = static_cast<uint8_t>(query[at++]);
    if (len == 0) break;
    // A compression pointer (or a reserved label type): not in a question
    // c-ares sends.
    if (len > 63 || at + len > query.size() || name->size() + len > 253) {
      return false;
    }
    if (!name->empty()) name->push_back('.');
    name->append(query, at, len);
    at += len;
  }
  if (at + 4 > query.size()) return false;
  *name = Canonical(*name);
  *end = at + 4;
  return true;
}

}  // namespace

DnsRecord ARecord(std::string name, std::string address, uint32_t ttl) {
  return {std::move(name), DnsType::kA, ttl, std::move(address)};
}
DnsRecord AaaaRecord(std::string name, std::string address, uint32_t ttl) {
  return {std::move(name), DnsType::kAaaa, ttl, std::move(address)};
}
DnsRecord CnameRecord(std::string name, std::string target, uint32_t ttl) {
  return {std::move(name), DnsType::kCname, ttl, std::move(target)};
}

absl::StatusOr<std::unique_ptr<ScriptedDnsServer>> ScriptedDnsServer::Start() {
  std::unique_ptr<ScriptedDnsServer> s(new ScriptedDnsServer());
  s->fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s->fd_ < 0) {
    return absl::UnavailableError(
        absl::StrCat("DNS test server: socket: ", std::strerror(errno)));
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(s->fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(s->fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return absl::UnavailableError(
        absl::StrCat("DNS test server: bind: ", std::strerror(errno)));
  }
  s->port_ = ntohs(addr.sin_port);
  s->wake_fd_ = eventfd(0, EFD_CLOEXEC);
  if (s->wake_fd_ < 0) {
    return absl::UnavailableError(
        absl::StrCat("DNS test server: eventfd: ", std::strerror(errno)));
  }
  s->thread_ = std::thread([raw = s.get()] { raw->Run(); });
  return s;
}

ScriptedDnsServer::~ScriptedDnsServer() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof(one));
    thread_.join();
  }
  if (wake_fd_ >= 0) close(wake_fd_);
  if (fd_ >= 0) close(fd_);
}

std::string ScriptedDnsServer::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

absl::Status ScriptedDnsServer::Set(const std::string& name, DnsType type,
                                    DnsReply reply) {
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  std::string data;
  for (const DnsRecord& r : reply.answers) {
    if (absl::Status s = CheckName(r.name); !s.ok()) return s;
    if (!RecordData(r, &data)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "record of '", r.name, "': bad data '", r.data, "' for its type"));
    }
  }
  MutexLock lock(&mu_);
  script_[{Canonical(name), static_cast<uint16_t>(type)}] = std::move(reply);
  return absl::OkStatus();
}

int64_t ScriptedDnsServer::queries(const std::string& name,
                                   DnsType type) const {
  MutexLock lock(&mu_);
  auto it = queries_.find({Canonical(name), static_cast<uint16_t>(type)});
  return it == queries_.end() ? 0 : it->second;
}

void ScriptedDnsServer::Run() {
  char buffer[4096];
  for (;;) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    sockaddr_storage from{};
    socklen_t from_len = sizeof(from);
    const ssize_t n = recvfrom(fd_, buffer, sizeof(buffer), 0,
                               reinterpret_cast<sockaddr*>(&from), &from_len);
    if (n <= 0) continue;
    const std::string response = Respond(std::string(buffer, n));
    if (response.empty()) continue;
    (void)!sendto(fd_, response.data(), response.size(), 0,
                  reinterpret_cast<sockaddr*>(&from), from_len);
  }
}

std::string ScriptedDnsServer::Respond(const std::string& query) {
  // A response, or less than a header: nothing to answer.
  if (query.size() < kHeaderSize || (query[2] & 0x80) != 0) return "";
  std::string name;
  size_t question_end = 0;
  const bool well_formed =
      GetU16(query, 4) == 1 && ReadQuestion(query, &name, &question_end);
  DnsReply reply;
  if (!well_formed) {
    reply.rcode = kFormErr;
  } else {
    const Key key{name, GetU16(query, question_end - 4)};
    MutexLock lock(&mu_);
    auto it = script_.find(key);
    if (it != script_.end()) {
      reply = it->second;
      ++queries_[key];
    } else {
      reply.rcode = kNxDomain;
      ++queries_[{"", 0}];
    }
  }
  std::string out = query.substr(0, 2);  // the query's ID
  // QR, the query's opcode, AA, its RD, RA, the scripted RCODE.
  out.push_back(static_cast<char>(0x80 | (query[2] & 0x79) | 0x04));
  out.push_back(static_cast<char>(0x80 | (reply.rcode & 0x0f)));
  PutU16(&out, well_formed ? 1 : 0);
  PutU16(&out, static_cast<uint16_t>(reply.answers.size()));
  PutU16(&out, 0);
  PutU16(&out, 0);
  if (!well_formed) return out;
  const size_t question_part = question_end;  // header and question
  out.append(query, kHeaderSize, question_end - kHeaderSize);
  std::string data;
  for (const DnsRecord& r : reply.answers) {
    RecordData(r, &data);  // checked by Set
    PutName(&out, r.name);
    PutU16(&out, static_cast<uint16_t>(r.type));
    PutU16(&out, kClassIn);
    PutU32(&out, r.ttl);
    PutU16(&out, static_cast<uint16_t>(data.size()));
    out += data;
  }
  if (out.size() > kMaxUdpMessage) {
    // RFC 1035 4.2.1: truncated, the answers left out.
    out.resize(question_part);
    out[2] = static_cast<char>(out[2] | 0x02);
    out[6] = out[7] = 0;
  }
  return out;
}

}  // namespace mesh::testing
