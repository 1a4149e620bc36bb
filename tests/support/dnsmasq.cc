#include "tests/support/dnsmasq.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "tests/support/test_pki.h"

namespace mesh::testing {
namespace {

// A UDP port free on 127.0.0.1 now (dnsmasq takes a number, not 0).
int FreeUdpPort() {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

std::string Dnsmasqbinary() {
  for (const char* path : {"/usr/sbin/dnsmasq", "/usr/bin/dnsmasq"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

}  // namespace

absl::StatusOr<std::unique_ptr<Dnsmasq>> Dnsmasq::Start(
    const std::string& domain, int ttl_seconds,
    const std::vector<std::string>& extra_args) {
  const std::string binary = Dnsmasqbinary();
  if (binary.empty()) {
    return absl::UnavailableError(
        "dnsmasq is not installed (Debian package dnsmasq-base; "
        "scripts/install-deps.sh installs it)");
  }
  std::unique_ptr<Dnsmasq> d(new Dnsmasq());
  char dir_template[] = "/tmp/mesh-dnsmasq-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) {
    return absl::UnavailableError("mkdtemp failed");
  }
  d->dir_ = dir_template;
  ReplaceTextFile(d->dir_ / "hosts", "");
  // A port taken between the probe and dnsmasq's bind fails the start,
  // which is retried on another.
  for (int attempt = 0; attempt < 5; ++attempt) {
    d->port_ = FreeUdpPort();
    const std::string log = (d->dir_ / "log").string();
    std::vector<std::string> args = {
        binary,
        "--keep-in-foreground",
        "--conf-file=/dev/null",
        "--no-resolv",
        "--no-hosts",
        "--no-poll",
        "--bind-interfaces",
        "--listen-address=127.0.0.1",
        absl::StrCat("--port=", d->port_),
        absl::StrCat("--addn-hosts=", (d->dir_ / "hosts").string()),
        absl::StrCat("--local=/", domain, "/"),
        absl::StrCat("--local-ttl=", ttl_seconds),
        absl::StrCat("--pid-file=", (d->dir_ / "pid").string()),
        "--user=root",
        "--log-queries",
        absl::StrCat("--log-facility=", log),
    };
    for (const std::string& a : extra_args) args.push_back(a);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string errors = (d->dir_ / "stderr").string();
    pid_t pid = fork();
    if (pid < 0) return absl::UnavailableError("fork failed");
    if (pid == 0) {
      // Gone with the test, even a killed one.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      const int fd = open(errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
    d->pid_ = pid;
    // Up when its log says so; down if it exited.
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    while (absl::Now() < deadline) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        d->pid_ = -1;
        break;
      }
      // Up, and the hosts file read (logged after the start).
      if (d->CountLog("read " + (d->dir_ / "hosts").string()) > 0) return d;
      absl::SleepFor(absl::Milliseconds(10));
    }
    d->Kill();
  }
  return absl::UnavailableError(absl::StrCat(
      "dnsmasq did not start; its output:\n", ReadTextFile(d->dir_ / "stderr"),
      "\nits log:\n", ReadTextFile(d->dir_ / "log")));
}

Dnsmasq::~Dnsmasq() {
  Kill();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string Dnsmasq::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

int Dnsmasq::CountLog(const std::string& what) const {
  std::ifstream in(dir_ / "log");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.find(what) != std::string::npos) ++n;
  }
  return n;
}

absl::Status Dnsmasq::SetHosts(
    const std::vector<std::pair<std::string, std::string>>& hosts) {
  std::ostringstream text;
  for (const auto& [ip, name] : hosts) text << ip << " " << name << "\n";
  ReplaceTextFile(dir_ / "hosts", text.str());
  if (pid_ < 0) return absl::FailedPreconditionError("dnsmasq is not running");
  // dnsmasq logs "read <file> - N names" at each reading.
  const int before = CountLog("read " + (dir_ / "hosts").string());
  kill(pid_, SIGHUP);
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  while (absl::Now() < deadline) {
    if (CountLog("read " + (dir_ / "hosts").string()) > before) {
      return absl::OkStatus();
    }
    absl::SleepFor(absl::Milliseconds(5));
  }
  return absl::DeadlineExceededError("dnsmasq did not read its hosts file");
}

void Dnsmasq::Kill() {
  if (pid_ < 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

}  // namespace mesh::testing
