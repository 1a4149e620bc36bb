// ScriptedDnsServer: a DNS server for tests, on UDP 127.0.0.1 at an
// ephemeral port, answering each (name, type) question with the reply the
// test scripted for it — answer records (A, AAAA, CNAME, each with its
// TTL) and a response code — and changing its answers whenever the test
// says. It counts the questions it gets, so that a test can wait for a
// retry instead of sleeping. Written from RFC 1035 for the cases the tests
// need (no compression in what it sends, UDP only, one question per query):
// answers that do not fit 512 bytes are sent truncated (TC), empty.
//
//   auto dns = ScriptedDnsServer::Start();  // StatusOr
//   (*dns)->Set("db.mesh.test", DnsType::kA,
//               {0, {ARecord("db.mesh.test", "127.0.0.2", 1)}});
//   options.servers = {(*dns)->address()};
//   (*dns)->Set("db.mesh.test", DnsType::kA,  // a loop
//               {0, {CnameRecord("db.mesh.test", "x.mesh.test", 1),
//                    CnameRecord("x.mesh.test", "db.mesh.test", 1)}});
//   WaitFor([&] { return (*dns)->queries("db.mesh.test", DnsType::kA) > 3; });
//
// A question nothing was scripted for gets NXDOMAIN. Thread-safe; the
// destructor stops the server and joins its thread.
#ifndef MESH_TESTS_SUPPORT_SCRIPTED_DNS_SERVER_H_
#define MESH_TESTS_SUPPORT_SCRIPTED_DNS_SERVER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "src/base/mutex.h"

namespace mesh::testing {

// The record types the server knows (RFC 1035 3.2.2, RFC 3596).
enum class DnsType : uint16_t { kA = 1, kCname = 5, kAaaa = 28 };

// One answer record: its owner, type, TTL and data — an address's text
// ("10.0.0.1", "::1") for A and AAAA, the target name for a CNAME.
struct DnsRecord {
  std::string name;
  DnsType type = DnsType::kA;
  uint32_t ttl = 1;
  std::string data;
};
DnsRecord ARecord(std::string name, std::string address, uint32_t ttl);
DnsRecord AaaaRecord(std::string name, std::string address, uint32_t ttl);
DnsRecord CnameRecord(std::string name, std::string target, uint32_t ttl);

// What a question gets: a response code (0 NOERROR, 2 SERVFAIL, 3
// NXDOMAIN, 5 REFUSED) and the answer section, in order.
struct DnsReply {
  int rcode = 0;
  std::vector<DnsRecord> answers;
};

class ScriptedDnsServer {
 public:
  // UNAVAILABLE naming the call that failed (socket, bind, eventfd).
  static absl::StatusOr<std::unique_ptr<ScriptedDnsServer>> Start();
  ~ScriptedDnsServer();
  ScriptedDnsServer(const ScriptedDnsServer&) = delete;
  ScriptedDnsServer& operator=(const ScriptedDnsServer&) = delete;

  // "127.0.0.1:PORT".
  std::string address() const;

  // From now on the question (`name`, `type`) gets `reply` (names compare
  // without regard to case). INVALID_ARGUMENT if a record's data is not an
  // address of its type, or a name is not a valid DNS name.
  absl::Status Set(const std::string& name, DnsType type, DnsReply reply);

  // Questions received for (`name`, `type`), answered or not.
  int64_t queries(const std::string& name, DnsType type) const;

 private:
  using Key = std::pair<std::string, uint16_t>;  // lower-case name, type

  ScriptedDnsServer() = default;
  void Run();
  // The response to one datagram; empty if it is not a query to answer.
  std::string Respond(const std::string& query);

  int fd_ = -1;       // the UDP socket
  int wake_fd_ = -1;  // an eventfd: stop
  int port_ = 0;
  mutable internal::Mutex mu_;
  std::map<Key, DnsReply> script_ ABSL_GUARDED_BY(mu_);
  // Bounded: a name is counted only if it was scripted, plus one entry
  // for all the others.
  std::map<Key, int64_t> queries_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_SCRIPTED_DNS_SERVER_H_
