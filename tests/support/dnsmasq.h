// Dnsmasq: a real DNS server for the DNS discovery tests — Debian's
// dnsmasq (package dnsmasq-base), run in the foreground on 127.0.0.1 at a
// free port, authoritative for one test domain, answering from a hosts file
// it reads again on SIGHUP, with a short TTL.
//
//   auto dns = Dnsmasq::Start("mesh.test", /*ttl_seconds=*/1);  // StatusOr
//   (*dns)->SetHosts({{"127.0.0.1", "db.mesh.test"}});  // re-read at once
//   options.servers = {(*dns)->address()};
//   (*dns)->Kill();  // queries now go unanswered
//
// Names of the domain that the hosts file lacks are NXDOMAIN. Thread-
// compatible; the process is killed with the object.
#ifndef MESH_TESTS_SUPPORT_DNSMASQ_H_
#define MESH_TESTS_SUPPORT_DNSMASQ_H_

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace mesh::testing {

class Dnsmasq {
 public:
  // UNAVAILABLE if dnsmasq is not installed or does not come up (its
  // output says why).
  // `extra_args`: more dnsmasq options (e.g. "--txt-record=name,text").
  static absl::StatusOr<std::unique_ptr<Dnsmasq>> Start(
      const std::string& domain, int ttl_seconds,
      const std::vector<std::string>& extra_args = {});
  ~Dnsmasq();

  // "127.0.0.1:PORT".
  std::string address() const;
  // Replaces the hosts file ({ip, name} lines) and makes dnsmasq read it
  // (SIGHUP); returns once dnsmasq says it has.
  absl::Status SetHosts(
      const std::vector<std::pair<std::string, std::string>>& hosts);
  // Stops the server (SIGKILL); idempotent.
  void Kill();

 private:
  Dnsmasq() = default;
  // Lines of dnsmasq's log that mention `what` (its output file).
  int CountLog(const std::string& what) const;

  std::filesystem::path dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_DNSMASQ_H_
