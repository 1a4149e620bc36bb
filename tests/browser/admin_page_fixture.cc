// mesh_admin_page_fixture: a Mesh with its admin page and real traffic,
// for the browser test (admin_page_test.py) and for looking at the page by
// hand. Three echo backends serve "books:7000", one serves "authors:7000";
// two threads keep calling both (about 100 calls per second each).
// "library:7000" is a traffic split, 80 to books and 20 to authors, with a
// channel but no calls of its own.
//
// Prints one line of JSON on stdout when ready:
//   {"admin":"127.0.0.1:PORT","books":["127.0.0.1:P1",...],"authors":[...]}
// then reads commands on stdin, one per line, answering "ok" or "error ...":
//   slow ADDRESS MS     the backend at ADDRESS answers after MS ms
//   fail ADDRESS        the backend at ADDRESS answers UNAVAILABLE
//   heal ADDRESS        the backend at ADDRESS answers at once, OK
//   quit                (or end of input) stops
// Exits 1 if it cannot start.
#include <atomic>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "mesh/discovery.h"
#include "mesh/mesh.h"
#include "tools/common/echo_backend.h"

namespace {

using mesh::tools::EchoBackend;

std::vector<mesh::Endpoint> EndpointsOf(
    const std::vector<std::unique_ptr<EchoBackend>>& backends) {
  std::vector<mesh::Endpoint> out;
  for (const auto& b : backends) out.emplace_back(b->address());
  return out;
}

std::string JsonList(const std::vector<std::unique_ptr<EchoBackend>>& bs) {
  std::vector<std::string> quoted;
  for (const auto& b : bs)
    quoted.push_back(absl::StrCat("\"", b->address(), "\""));
  return absl::StrCat("[", absl::StrJoin(quoted, ","), "]");
}

int Run() {
  std::vector<std::unique_ptr<EchoBackend>> books, authors;
  for (int i = 0; i < 4; ++i) {
    auto backend = EchoBackend::Start();
    if (!backend.ok()) {
      std::fprintf(stderr, "backend: %s\n",
                   backend.status().ToString().c_str());
      return 1;
    }
    (i < 3 ? books : authors).push_back(*std::move(backend));
  }
  std::map<std::string, EchoBackend*> by_address;
  for (auto* list : {&books, &authors}) {
    for (auto& b : *list) by_address[b->address()] = b.get();
  }
  auto discovery = mesh::StaticDiscovery::Create();
  if (!discovery->SetEndpoints("books:7000", EndpointsOf(books)).ok() ||
      !discovery->SetEndpoints("authors:7000", EndpointsOf(authors)).ok()) {
    return 1;
  }
  mesh::ServiceConfig library;
  library.backends = {{"books:7000", 80}, {"authors:7000", 20}};
  if (!discovery->SetServiceConfig("library:7000", library).ok()) return 1;
  mesh::MeshOptions options;
  options.discovery = discovery;
  options.admin_address = "127.0.0.1:0";
  auto mesh = mesh::Mesh::Create(options);
  if (!mesh.ok()) {
    std::fprintf(stderr, "mesh: %s\n", mesh.status().ToString().c_str());
    return 1;
  }
  auto books_channel = (*mesh)->NewChannel("books:7000");
  auto authors_channel = (*mesh)->NewChannel("authors:7000");
  auto library_channel = (*mesh)->NewChannel("library:7000");
  if (!books_channel.ok() || !authors_channel.ok() || !library_channel.ok()) {
    return 1;
  }

  std::atomic<bool> stop{false};
  auto load = [&stop](mesh::Channel* channel, std::string method) {
    while (!stop.load()) {
      mesh::CallOptions call;
      call.timeout = absl::Seconds(2);
      (void)channel->CallRaw(method, "x", call);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  };
  std::thread books_load(load, books_channel->get(), "/books.Library/GetBook");
  std::thread authors_load(load, authors_channel->get(),
                           "/authors.Directory/ListAuthors");

  std::printf("{\"admin\":\"%s\",\"books\":%s,\"authors\":%s}\n",
              (*mesh)->AdminAddress().c_str(), JsonList(books).c_str(),
              JsonList(authors).c_str());
  std::fflush(stdout);

  std::string line;
  while (std::getline(std::cin, line)) {
    std::vector<std::string> words = absl::StrSplit(line, ' ');
    if (words.empty() || words[0] == "quit") break;
    EchoBackend* backend = nullptr;
    if (words.size() >= 2) {
      auto it = by_address.find(words[1]);
      if (it != by_address.end()) backend = it->second;
    }
    int ms = 0;
    if (backend == nullptr) {
      std::printf("error: no backend '%s'\n",
                  words.size() >= 2 ? words[1].c_str() : "");
    } else if (words[0] == "slow" && words.size() == 3 &&
               absl::SimpleAtoi(words[2], &ms)) {
      backend->set_delay(absl::Milliseconds(ms));
      std::printf("ok\n");
    } else if (words[0] == "fail") {
      backend->set_status(grpc::StatusCode::UNAVAILABLE);
      std::printf("ok\n");
    } else if (words[0] == "heal") {
      backend->set_status(grpc::StatusCode::OK);
      backend->set_delay(absl::ZeroDuration());
      std::printf("ok\n");
    } else {
      std::printf("error: unknown command '%s'\n", line.c_str());
    }
    std::fflush(stdout);
  }
  stop.store(true);
  books_load.join();
  authors_load.join();
  return 0;
}

}  // namespace

int main() { return Run(); }
