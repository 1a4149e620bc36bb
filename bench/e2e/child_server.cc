#include "bench/e2e/child_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace mesh::bench {
namespace {

bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

}  // namespace

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

std::unique_ptr<ChildServer> ChildServer::Start(std::vector<std::string> args,
                                                std::string* why) {
  if (args.empty() || args[0].empty()) {
    *why = "no program given";
    return nullptr;
  }
  const int port = FreePort();
  if (port == 0) {
    *why = "no free port";
    return nullptr;
  }
  for (std::string& a : args) {
    a = absl::StrReplaceAll(a, {{"{port}", absl::StrCat(port)}});
  }
  pid_t pid = fork();
  if (pid < 0) {
    *why = absl::StrCat("fork: ", std::strerror(errno));
    return nullptr;
  }
  if (pid == 0) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // Its start-up notices would interleave with the tables.
    int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) {
      dup2(null_fd, STDOUT_FILENO);
      dup2(null_fd, STDERR_FILENO);
    }
    execvp(argv[0], argv.data());
    _exit(127);
  }
  auto server = std::unique_ptr<ChildServer>(new ChildServer(pid, port));
  for (int i = 0; i < 100; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      server->pid_ = 0;
      *why = WIFEXITED(status) && WEXITSTATUS(status) == 127
                 ? absl::StrCat(args[0], " not found")
                 : absl::StrCat(args[0], " exited at start");
      return nullptr;
    }
    if (Accepts(port)) return server;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  *why = absl::StrCat(args[0], " did not listen on port ", port, " in 5 s");
  return nullptr;
}

ChildServer::~ChildServer() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  waitpid(pid_, nullptr, 0);
}

}  // namespace mesh::bench
