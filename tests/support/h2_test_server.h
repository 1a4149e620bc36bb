// H2TestServer: a small HTTP/2 server on 127.0.0.1 for the plain-HTTP tests,
// built on libnghttp2 (the HTTP/2 library curl itself uses). It speaks
// HTTP/2 with prior knowledge over cleartext (h2c), or over TLS with ALPN
// "h2" and, optionally, a client certificate required. Every request is
// answered by the test's handler, after the delay the handler asks for; the
// server records what it received, the connections it accepted and the
// streams its clients cancelled.
//
//   H2TestServer server([](const H2TestServer::Request& r) {
//     H2TestServer::Response out;
//     out.body = "hello " + r.path;
//     return out;
//   });
//   ASSERT_TRUE(server.Start().ok());
//   // ... http://127.0.0.1:<server.port()>/
//
// Thread-safe; the handler runs on a connection's thread.
#ifndef MESH_TESTS_SUPPORT_H2_TEST_SERVER_H_
#define MESH_TESTS_SUPPORT_H2_TEST_SERVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "src/base/mutex.h"

namespace mesh::testing {

class H2TestServer {
 public:
  struct Request {
    std::string method;
    std::string path;  // with its query
    std::string authority;
    std::string scheme;
    std::vector<std::pair<std::string, std::string>> headers;  // not ':'
    std::string body;
    std::string Header(const std::string& name) const;
  };
  struct Response {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    // Answer after this long (the stream stays open meanwhile).
    absl::Duration delay = absl::ZeroDuration();
    // Send content-length, as servers do for a body they have whole.
    // (Without it, curl 7.88 can miss the end of an answer whose last frame
    // fills its 16 KiB receive buffer, and wait for more.)
    bool content_length = true;
    // End the stream with the headers, sending no DATA frame: a gRPC
    // server's Trailers-Only answer (grpc-status among the headers).
    bool headers_only = false;
  };
  using Handler = std::function<Response(const Request&)>;

  // TLS: the server's chain and key (PEM); with client_ca_pem, a client
  // certificate chaining to it is required.
  struct TlsOptions {
    std::string cert_chain_pem;
    std::string private_key_pem;
    std::string client_ca_pem;
  };

  explicit H2TestServer(Handler handler);
  H2TestServer(Handler handler, TlsOptions tls);
  ~H2TestServer();  // Stop()
  H2TestServer(const H2TestServer&) = delete;
  H2TestServer& operator=(const H2TestServer&) = delete;

  // Listens on 127.0.0.1 (`port` 0: an ephemeral one).
  absl::Status Start(int port = 0);
  // Closes the listener and every connection, and joins the threads.
  void Stop();

  int port() const { return port_; }
  std::string address() const;  // "127.0.0.1:<port>"

  // Connections accepted so far (TLS: handshakes that completed).
  int connections() const { return connections_.load(); }
  // Requests received in full so far.
  int requests() const { return requests_.load(); }
  // Streams the client gave up before the answer ended: reset
  // (RST_STREAM), or left open on a connection it closed.
  int cancelled() const { return cancelled_.load(); }
  // TLS handshakes that failed (e.g. a client without a certificate).
  int handshake_failures() const { return handshake_failures_.load(); }
  // Copies of the requests received, in order.
  std::vector<Request> received() const;

 private:
  struct Connection;
  void AcceptLoop();
  void Serve(int fd);

  const Handler handler_;
  const TlsOptions tls_;
  void* ssl_ctx_ = nullptr;  // SSL_CTX*, with TLS
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};  // a pipe that tells every loop to stop
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> requests_{0};
  std::atomic<int> cancelled_{0};
  std::atomic<int> handshake_failures_{0};
  std::thread acceptor_;
  // mesh's lock (src/base/mutex.h): TSan sees it, not Debian's absl::Mutex.
  mutable internal::Mutex mu_;
  std::vector<std::thread> workers_ ABSL_GUARDED_BY(mu_);
  std::vector<Request> received_ ABSL_GUARDED_BY(mu_);
};

}  // namespace mesh::testing

#endif  // MESH_TESTS_SUPPORT_H2_TEST_SERVER_H_
