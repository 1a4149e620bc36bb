// mesh_tls_bench: what mutual TLS costs a call through mesh (issue 17).
//
// In one process: two TestEchoServers on 127.0.0.1 (tests/support), one in
// plaintext and one serving mutual TLS (client certificates required), with
// certificates made by the `openssl` command (tests/support/test_pki.h). One
// Mesh with an identity and static discovery: the target "plain:7000" has
// the plaintext server (no identity), "tls:7000" the TLS one (with its
// identity). A generated stub over Mesh::NewGrpcChannel for each.
//
// Established connections: closed-loop sync unary calls (`--concurrency`
// threads), the two targets interleaved, `--rounds` rounds after a warm-up;
// the goal (mTLS p50 / plaintext p50 <= 1.10) is the median of per-round
// ratios. For reference, the same on direct grpc::Channels (gRPC's own
// TLS credentials, no mesh): what TLS costs gRPC itself. New connections:
// `--connects` times, a fresh Mesh per variant and the time of its first call
// (TCP connect; for TLS, the credentials made from the PEM and the handshake
// with both certificates and the identity check; HTTP/2 set-up; the call);
// medians, their difference being what TLS adds to a new connection. Prints
// a table; writes tls.md and tls_goals.md into `--out`.
//
//   mesh_tls_bench --out results/ [--calls 2000] [--rounds 8]
//       [--concurrency 1,8] [--connects 20]
//
// Exits 1 if a variant cannot be set up (openssl missing, say).
#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/e2e/bench_cli.h"
#include "bench/e2e/unary_loop.h"
#include "mesh/mesh.h"
#include "meshtest/echo.grpc.pb.h"
#include "tests/support/test_echo_server.h"
#include "tests/support/test_pki.h"

namespace mesh::bench {
namespace {

using meshtest::EchoRequest;
using meshtest::EchoResponse;
using meshtest::TestEcho;

constexpr char kIdentity[] = "echo.ns.serviceaccount.identity.mesh.bench";

struct Flags {
  std::string out = "results";
  int calls = 2000;  // measured calls per variant, round and concurrency
  int rounds = 8;
  int warmup = 500;
  std::vector<int> concurrency = {1, 8};
  int connects = 20;
};

struct Setup {
  std::unique_ptr<testing::TestPki> pki;
  testing::KeyPair client;
  std::unique_ptr<testing::TestEchoServer> plain;
  std::unique_ptr<testing::TestEchoServer> tls;
};

template <typename T>
T OrDie(absl::StatusOr<T> value, const char* what) {
  if (!value.ok()) Die(absl::StrCat(what, ": ", value.status().ToString()));
  return *std::move(value);
}

Setup MakeSetup() {
  Setup s;
  s.pki = OrDie(testing::TestPki::Create(), "making the test CA");
  testing::LeafOptions server_names;
  server_names.sans = {std::string("DNS:") + kIdentity};
  testing::KeyPair server =
      OrDie(s.pki->Issue("server", server_names), "the server certificate");
  s.client = OrDie(s.pki->Issue("client"), "the client certificate");
  testing::EchoServerTls tls;
  tls.cert_chain = server.cert;
  tls.private_key = server.key;
  tls.client_ca = s.pki->ca_pem();
  tls.record_client_serials = false;  // the same work per call as plaintext
  s.plain = testing::TestEchoServer::Start();
  s.tls = testing::TestEchoServer::Start(tls);
  return s;
}

// A Mesh with the client identity; "plain:7000" and "tls:7000" as above.
std::unique_ptr<Mesh> MakeMesh(const Setup& s) {
  auto discovery = StaticDiscovery::Create();
  Endpoint tls_endpoint(s.tls->address());
  tls_endpoint.tls_identity = kIdentity;
  if (!discovery->SetEndpoints("plain:7000", {{s.plain->address()}}).ok() ||
      !discovery->SetEndpoints("tls:7000", {tls_endpoint}).ok()) {
    Die("cannot set the endpoints");
  }
  MeshOptions options;
  options.discovery = discovery;
  options.identity.cert_chain_pem = s.client.cert;
  options.identity.private_key_pem = s.client.key;
  options.identity.trust_roots_pem = s.pki->ca_pem();
  return OrDie(Mesh::Create(options), "creating the mesh");
}

std::unique_ptr<TestEcho::Stub> StubFor(Mesh& mesh, const std::string& target) {
  return TestEcho::NewStub(
      OrDie(mesh.NewGrpcChannel(target), "creating the channel"));
}

// The first call of a fresh Mesh to `target`, in ms (its endpoints are
// given before the clock starts: only the connection and the call count).
double FirstCallMs(const Setup& s, const std::string& target) {
  std::unique_ptr<Mesh> mesh = MakeMesh(s);
  auto channel = OrDie(mesh->NewChannel(target), "creating the channel");
  if (!channel->WaitForEndpoints(absl::Seconds(5)).ok()) {
    Die("no endpoints for " + target);
  }
  std::unique_ptr<TestEcho::Stub> stub = StubFor(*mesh, target);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  EchoRequest request;
  request.set_message(std::string(64, 'x'));
  EchoResponse response;
  absl::Time begin = absl::Now();
  grpc::Status status = stub->Unary(&context, request, &response);
  double ms = absl::ToDoubleMilliseconds(absl::Now() - begin);
  if (!status.ok()) Die(target + " first call: " + status.error_message());
  return ms;
}

int Main(int argc, char** argv) {
  Flags f;
  ParseFlagsOrDie(argc, argv,
                  {{"out", "DIR", TextFlag(&f.out)},
                   {"calls", "N", IntFlag(&f.calls, 1)},
                   {"rounds", "N", IntFlag(&f.rounds, 1)},
                   {"warmup", "N", IntFlag(&f.warmup, 0)},
                   {"concurrency", "N,N", IntListFlag(&f.concurrency, 1)},
                   {"connects", "N", IntFlag(&f.connects, 1)}});
  Setup setup = MakeSetup();
  std::unique_ptr<Mesh> mesh = MakeMesh(setup);
  // [0] plaintext, [1] mutual TLS; through mesh, then (for reference) on
  // direct grpc::Channels with gRPC's own TLS credentials and no mesh.
  std::unique_ptr<TestEcho::Stub> stubs[2] = {StubFor(*mesh, "plain:7000"),
                                              StubFor(*mesh, "tls:7000")};
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = setup.pki->ca_pem();
  ssl.pem_private_key = setup.client.key;
  ssl.pem_cert_chain = setup.client.cert;
  grpc::ChannelArguments tls_args;
  tls_args.SetSslTargetNameOverride(kIdentity);
  std::unique_ptr<TestEcho::Stub> direct[2] = {
      TestEcho::NewStub(grpc::CreateCustomChannel(
          setup.plain->address(), grpc::InsecureChannelCredentials(),
          grpc::ChannelArguments())),
      TestEcho::NewStub(grpc::CreateCustomChannel(
          setup.tls->address(), grpc::SslCredentials(ssl), tls_args))};
  for (auto* set : {&stubs, &direct}) {
    for (auto& stub : *set) {
      for (int c : f.concurrency) RunUnary(*stub, f.warmup, c);
    }
  }

  MarkdownTable table(
      {"measure", "in flight", "plaintext", "mutual TLS", "TLS / plaintext"});
  MarkdownTable goals({"goal", "measured", "verdict"});
  for (int c : f.concurrency) {
    std::vector<double> ratio, rate_ratio, p50[2], rate[2];
    std::vector<double> direct_ratio, direct_p50[2];
    std::vector<double> cpu[2], cpu_ratio, direct_cpu[2], direct_cpu_ratio;
    for (int r = 0; r < f.rounds; ++r) {
      UnaryRun run[2], direct_run[2];
      for (int v = 0; v < 2; ++v) {
        run[v] = RunUnary(*stubs[v], f.calls, c);
        direct_run[v] = RunUnary(*direct[v], f.calls, c);
      }
      for (int v = 0; v < 2; ++v) {
        p50[v].push_back(run[v].p50_ms);
        rate[v].push_back(run[v].calls_per_s);
        direct_p50[v].push_back(direct_run[v].p50_ms);
        cpu[v].push_back(run[v].cpu_us_per_call);
        direct_cpu[v].push_back(direct_run[v].cpu_us_per_call);
      }
      cpu_ratio.push_back(run[1].cpu_us_per_call / run[0].cpu_us_per_call);
      direct_cpu_ratio.push_back(direct_run[1].cpu_us_per_call /
                                 direct_run[0].cpu_us_per_call);
      ratio.push_back(run[1].p50_ms / run[0].p50_ms);
      rate_ratio.push_back(run[1].calls_per_s / run[0].calls_per_s);
      direct_ratio.push_back(direct_run[1].p50_ms / direct_run[0].p50_ms);
    }
    const double pr = Median(ratio);
    table.AddRow({"unary p50 (ms), established connection", absl::StrCat(c),
                  absl::StrFormat("%.3f", Median(p50[0])),
                  absl::StrFormat("%.3f", Median(p50[1])),
                  absl::StrFormat("%.3f", pr)});
    table.AddRow({"unary calls/s", absl::StrCat(c),
                  Thousands(static_cast<int64_t>(Median(rate[0]))),
                  Thousands(static_cast<int64_t>(Median(rate[1]))),
                  absl::StrFormat("%.3f", Median(rate_ratio))});
    table.AddRow({"unary CPU per call (µs, whole process)", absl::StrCat(c),
                  absl::StrFormat("%.1f", Median(cpu[0])),
                  absl::StrFormat("%.1f", Median(cpu[1])),
                  absl::StrFormat("%.3f", Median(cpu_ratio))});
    table.AddRow({"(direct grpc::Channel, no mesh: unary p50, ms)",
                  absl::StrCat(c),
                  absl::StrFormat("%.3f", Median(direct_p50[0])),
                  absl::StrFormat("%.3f", Median(direct_p50[1])),
                  absl::StrFormat("%.3f", Median(direct_ratio))});
    table.AddRow({"(direct grpc::Channel, no mesh: CPU per call, µs)",
                  absl::StrCat(c),
                  absl::StrFormat("%.1f", Median(direct_cpu[0])),
                  absl::StrFormat("%.1f", Median(direct_cpu[1])),
                  absl::StrFormat("%.3f", Median(direct_cpu_ratio))});
    goals.AddRow({absl::StrCat("identity: mTLS unary p50 at ", c,
                               " in flight ≤ 1.10× plaintext"),
                  absl::StrFormat("**%.3f×**", pr),
                  Verdict(pr <= 1.10, absl::StrFormat("%.2f×", pr / 1.10))});
  }
  std::vector<double> first[2];
  for (int i = 0; i < f.connects; ++i) {
    first[0].push_back(FirstCallMs(setup, "plain:7000"));
    first[1].push_back(FirstCallMs(setup, "tls:7000"));
  }
  const double plain_first = Median(first[0]), tls_first = Median(first[1]);
  table.AddRow({"first call on a new connection (ms)", "1",
                absl::StrFormat("%.3f", plain_first),
                absl::StrFormat("%.3f", tls_first),
                absl::StrFormat("%.3f", tls_first / plain_first)});
  table.AddRow({"of which TLS: credentials and handshake (ms)", "1", "-",
                absl::StrFormat("%.3f", tls_first - plain_first), "-"});
  std::printf("%s\n%s", table.ToString().c_str(), goals.ToString().c_str());
  WriteResultsOrDie(f.out, {{"tls.md", table.ToString()},
                            {"tls_goals.md", goals.ToString()}});
  return 0;
}

}  // namespace
}  // namespace mesh::bench

int main(int argc, char** argv) { return mesh::bench::Main(argc, argv); }
