// mesh_call_cost_bench: what one unary call costs the calling process, in
// instructions and context switches, through mesh and directly.
//
// Two roles, so that the backend runs in another process:
//   mesh_call_cost_bench --serve ADDR_FILE
//       starts a meshtest.TestEcho server on 127.0.0.1, writes its address
//       into ADDR_FILE and serves until killed;
//   mesh_call_cost_bench --backend ADDR --variant V [--calls N]
//       [--concurrency C] [--warmup W]
//       sets up variant V against ADDR, makes W unmeasured calls, then N
//       calls from C threads (each N / C, sync), and prints one line:
//         variant=V calls=N in_flight=C nvcsw_per_call=X cpu_us_per_call=Y
//       (voluntary context switches and CPU time of the whole process per
//       measured call, from getrusage).
// The variants (all the same 64-byte meshtest.TestEcho/Unary call):
//   direct_stub     generated sync stub on a direct grpc::Channel
//   direct_stub_mixed  the same, on a channel that has carried one
//                   callback-API call first (gRPC 1.51 then runs the
//                   channel's I/O on its own threads)
//   direct_generic  grpc::GenericStub's callback UnaryCall on a direct
//                   channel, the thread waiting for the callback
//   mesh_callraw    mesh::Channel::CallRaw (StaticDiscovery, one endpoint)
//   mesh_call       mesh::Channel::Call with the generated messages
//   mesh_stub       the generated sync stub over Mesh::NewGrpcChannel
// scripts/call-cost.sh runs every variant under valgrind's callgrind with
// --calls 0 and --calls N: (Ir(N) - Ir(0)) / N counts the instructions of
// one call over all of the process's threads, set-up and warm-up cancelled.
//
// Exits 1 if the variant cannot be set up or a call fails.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "bench/e2e/bench_cli.h"
#include "mesh/mesh.h"
#include "meshtest/echo.grpc.pb.h"
#include "tests/support/test_echo_server.h"

namespace mesh::bench {
namespace {

using meshtest::EchoRequest;
using meshtest::EchoResponse;
using meshtest::TestEcho;

constexpr char kMethod[] = "/meshtest.TestEcho/Unary";
constexpr char kTarget[] = "echo:7000";

struct Flags {
  std::string serve;    // set: the server role, writing its address here
  std::string backend;  // the client role: the server's address
  std::string variant = "direct_stub";
  int calls = 1000;
  int concurrency = 1;
  int warmup = 200;
};

// One call of a variant; false if it failed.
using CallFn = std::function<bool()>;

EchoRequest Request() {
  EchoRequest req;
  req.set_message(std::string(64, 'x'));
  return req;
}

struct Usage {
  double cpu_us = 0;
  long nvcsw = 0;
};

Usage Now() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  Usage out;
  out.cpu_us = (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 +
               u.ru_utime.tv_usec + u.ru_stime.tv_usec;
  out.nvcsw = u.ru_nvcsw;
  return out;
}

// One callback-API unary call through `stub`, this thread waiting for its
// callback; true if it ended OK.
bool GenericCall(grpc::GenericStub& stub, const std::string& request_bytes) {
  grpc::ClientContext ctx;
  grpc::ByteBuffer resp;
  grpc::Slice slice(request_bytes);
  grpc::ByteBuffer req(&slice, 1);
  grpc::Status status;
  absl::Notification done;
  stub.UnaryCall(&ctx, kMethod, grpc::StubOptions(), &req, &resp,
                 [&](grpc::Status s) {
                   status = std::move(s);
                   done.Notify();
                 });
  done.WaitForNotification();
  return status.ok();
}

// Runs `calls` calls of `fn` from `threads` threads; dies on a failure.
void Run(const CallFn& fn, int calls, int threads) {
  std::vector<std::thread> workers;
  std::atomic<bool> failed{false};
  for (int t = 0; t < threads; ++t) {
    int mine = calls / threads + (t < calls % threads ? 1 : 0);
    workers.emplace_back([&fn, &failed, mine] {
      for (int i = 0; i < mine && !failed.load(); ++i) {
        if (!fn()) failed.store(true);
      }
    });
  }
  for (auto& w : workers) w.join();
  if (failed.load()) Die("a call failed");
}

int Serve(const std::string& addr_file) {
  auto server = testing::TestEchoServer::Start();
  {
    std::ofstream out(addr_file + ".tmp");
    out << server->address() << "\n";
    if (!out) Die("cannot write " + addr_file);
  }
  if (std::rename((addr_file + ".tmp").c_str(), addr_file.c_str()) != 0) {
    Die("cannot write " + addr_file);
  }
  for (;;) pause();
}

int Main(int argc, char** argv) {
  Flags f;
  ParseFlagsOrDie(argc, argv,
                  {{"serve", "FILE", TextFlag(&f.serve)},
                   {"backend", "ADDR", TextFlag(&f.backend)},
                   {"variant", "NAME", TextFlag(&f.variant)},
                   {"calls", "N", IntFlag(&f.calls, 0)},
                   {"concurrency", "N", IntFlag(&f.concurrency, 1)},
                   {"warmup", "N", IntFlag(&f.warmup, 0)}});
  if (!f.serve.empty()) return Serve(f.serve);
  if (f.backend.empty()) DieOfFlags("--backend or --serve is required");

  const EchoRequest request = Request();
  std::string request_bytes;
  request.SerializeToString(&request_bytes);

  std::shared_ptr<grpc::Channel> direct =
      grpc::CreateChannel(f.backend, grpc::InsecureChannelCredentials());
  std::unique_ptr<TestEcho::Stub> stub;
  std::unique_ptr<grpc::GenericStub> generic;
  std::unique_ptr<Mesh> mesh;
  std::unique_ptr<Channel> channel;
  std::shared_ptr<grpc::Channel> mesh_grpc;

  auto make_mesh = [&] {
    auto discovery = StaticDiscovery::Create();
    if (!discovery->SetEndpoints(kTarget, {{f.backend}}).ok()) {
      Die("cannot set the endpoint");
    }
    MeshOptions options;
    options.discovery = discovery;
    auto m = Mesh::Create(options);
    if (!m.ok()) Die(m.status().ToString());
    mesh = *std::move(m);
  };

  CallFn fn;
  if (f.variant == "direct_stub_mixed") {
    // One callback-API call first, on the same channel.
    grpc::GenericStub g(direct);
    GenericCall(g, request_bytes);
  }
  if (f.variant == "direct_stub" || f.variant == "direct_stub_mixed" ||
      f.variant == "mesh_stub") {
    if (f.variant == "mesh_stub") {
      make_mesh();
      auto c = mesh->NewGrpcChannel(kTarget);
      if (!c.ok()) Die(c.status().ToString());
      mesh_grpc = *c;
    }
    stub = TestEcho::NewStub(mesh_grpc ? mesh_grpc : direct);
    fn = [&] {
      grpc::ClientContext ctx;
      EchoResponse resp;
      return stub->Unary(&ctx, request, &resp).ok();
    };
  } else if (f.variant == "direct_generic") {
    generic = std::make_unique<grpc::GenericStub>(direct);
    fn = [&] { return GenericCall(*generic, request_bytes); };
  } else if (f.variant == "mesh_callraw" || f.variant == "mesh_call") {
    make_mesh();
    auto c = mesh->NewChannel(kTarget);
    if (!c.ok()) Die(c.status().ToString());
    channel = *std::move(c);
    if (f.variant == "mesh_callraw") {
      fn = [&] { return channel->CallRaw(kMethod, request_bytes).status.ok(); };
    } else {
      fn = [&] {
        EchoResponse resp;
        return channel->Call(kMethod, request, &resp).ok();
      };
    }
  } else {
    DieOfFlags("unknown --variant " + f.variant);
  }

  Run(fn, f.warmup, f.concurrency);
  Usage before = Now();
  Run(fn, f.calls, f.concurrency);
  Usage after = Now();
  const double n = f.calls > 0 ? f.calls : 1;
  std::printf(
      "variant=%s calls=%d in_flight=%d nvcsw_per_call=%.2f "
      "cpu_us_per_call=%.1f\n",
      f.variant.c_str(), f.calls, f.concurrency,
      (after.nvcsw - before.nvcsw) / n, (after.cpu_us - before.cpu_us) / n);
  return 0;
}

}  // namespace
}  // namespace mesh::bench

int main(int argc, char** argv) { return mesh::bench::Main(argc, argv); }
