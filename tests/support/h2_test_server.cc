#include "tests/support/h2_test_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace mesh::testing {
namespace {

constexpr absl::Duration kHandshakeLimit = absl::Seconds(5);

void SetNonBlocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK);
}

// Loads PEM text into the context; false with OpenSSL's error queue set.
bool UsePem(SSL_CTX* ctx, const H2TestServer::TlsOptions& tls) {
  BIO* chain = BIO_new_mem_buf(tls.cert_chain_pem.data(),
                               static_cast<int>(tls.cert_chain_pem.size()));
  X509* leaf = PEM_read_bio_X509(chain, nullptr, nullptr, nullptr);
  bool ok = leaf != nullptr && SSL_CTX_use_certificate(ctx, leaf) == 1;
  X509_free(leaf);
  while (ok) {
    X509* extra = PEM_read_bio_X509(chain, nullptr, nullptr, nullptr);
    if (extra == nullptr) break;
    if (SSL_CTX_add_extra_chain_cert(ctx, extra) != 1) X509_free(extra);
  }
  ERR_clear_error();  // the end of the chain reads as an error
  BIO_free(chain);
  BIO* key_bio = BIO_new_mem_buf(tls.private_key_pem.data(),
                                 static_cast<int>(tls.private_key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  ok = ok && key != nullptr && SSL_CTX_use_PrivateKey(ctx, key) == 1;
  EVP_PKEY_free(key);
  if (ok && !tls.client_ca_pem.empty()) {
    BIO* ca = BIO_new_mem_buf(tls.client_ca_pem.data(),
                              static_cast<int>(tls.client_ca_pem.size()));
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    while (X509* cert = PEM_read_bio_X509(ca, nullptr, nullptr, nullptr)) {
      X509_STORE_add_cert(store, cert);
      X509_free(cert);
    }
    ERR_clear_error();
    BIO_free(ca);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       nullptr);
  }
  return ok;
}

int SelectH2(SSL*, const unsigned char** out, unsigned char* outlen,
             const unsigned char* in, unsigned int inlen, void*) {
  for (unsigned int i = 0; i < inlen;) {
    const unsigned int len = in[i];
    if (i + 1 + len > inlen) break;
    if (len == 2 && std::memcmp(in + i + 1, "h2", 2) == 0) {
      *out = in + i + 1;
      *outlen = 2;
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + len;
  }
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

}  // namespace

std::string H2TestServer::Request::Header(const std::string& name) const {
  for (const auto& [n, v] : headers) {
    if (n == name) return v;
  }
  return "";
}

// One connection's HTTP/2 session and streams; used by its thread only.
struct H2TestServer::Connection {
  struct Stream {
    Request request;
    Response response;
    size_t offset = 0;
    absl::Time due = absl::InfiniteFuture();  // when to answer
    bool answered = false;                    // submitted
    bool sent_all = false;                    // the body's end was sent
  };
  H2TestServer* server = nullptr;
  nghttp2_session* session = nullptr;
  std::map<int32_t, Stream> streams;

  static int OnBeginHeaders(nghttp2_session*, const nghttp2_frame* frame,
                            void* user) {
    auto* c = static_cast<Connection*>(user);
    if (frame->hd.type == NGHTTP2_HEADERS &&
        frame->headers.cat == NGHTTP2_HCAT_REQUEST) {
      c->streams[frame->hd.stream_id];
    }
    return 0;
  }
  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame,
                      const uint8_t* name, size_t namelen, const uint8_t* value,
                      size_t valuelen, uint8_t, void* user) {
    auto* c = static_cast<Connection*>(user);
    auto it = c->streams.find(frame->hd.stream_id);
    if (it == c->streams.end()) return 0;
    std::string n(reinterpret_cast<const char*>(name), namelen);
    std::string v(reinterpret_cast<const char*>(value), valuelen);
    Request& r = it->second.request;
    if (n == ":method") {
      r.method = std::move(v);
    } else if (n == ":path") {
      r.path = std::move(v);
    } else if (n == ":authority") {
      r.authority = std::move(v);
    } else if (n == ":scheme") {
      r.scheme = std::move(v);
    } else {
      r.headers.emplace_back(std::move(n), std::move(v));
    }
    return 0;
  }
  static int OnData(nghttp2_session*, uint8_t, int32_t stream_id,
                    const uint8_t* data, size_t len, void* user) {
    auto* c = static_cast<Connection*>(user);
    auto it = c->streams.find(stream_id);
    if (it != c->streams.end()) {
      it->second.request.body.append(reinterpret_cast<const char*>(data), len);
    }
    return 0;
  }
  static int OnFrame(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    auto* c = static_cast<Connection*>(user);
    auto it = c->streams.find(frame->hd.stream_id);
    if (it == c->streams.end()) return 0;
    if (frame->hd.type == NGHTTP2_RST_STREAM) {
      if (!it->second.sent_all) c->server->cancelled_.fetch_add(1);
      return 0;
    }
    if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0) {
      c->OnRequest(it->second);
    }
    return 0;
  }
  static int OnClose(nghttp2_session*, int32_t stream_id, uint32_t,
                     void* user) {
    static_cast<Connection*>(user)->streams.erase(stream_id);
    return 0;
  }
  static ssize_t ReadBody(nghttp2_session*, int32_t, uint8_t* buf,
                          size_t length, uint32_t* flags,
                          nghttp2_data_source* source, void*) {
    auto* s = static_cast<Stream*>(source->ptr);
    const std::string& body = s->response.body;
    const size_t n = std::min(length, body.size() - s->offset);
    std::memcpy(buf, body.data() + s->offset, n);
    s->offset += n;
    if (s->offset == body.size()) {
      *flags |= NGHTTP2_DATA_FLAG_EOF;
      s->sent_all = true;
    }
    return static_cast<ssize_t>(n);
  }

  void OnRequest(Stream& s) {
    server->requests_.fetch_add(1);
    {
      internal::MutexLock lock(&server->mu_);
      server->received_.push_back(s.request);
    }
    s.response = server->handler_(s.request);
    s.due = absl::Now() + s.response.delay;
  }

  // Submits the answers that are due; returns the next due time.
  absl::Time AnswerDue() {
    const absl::Time now = absl::Now();
    absl::Time next = absl::InfiniteFuture();
    for (auto& [id, s] : streams) {
      if (s.answered || s.due == absl::InfiniteFuture()) continue;
      if (s.due > now) {
        next = std::min(next, s.due);
        continue;
      }
      s.answered = true;
      std::string status = absl::StrCat(s.response.status);
      std::vector<nghttp2_nv> nva;
      auto add = [&nva](const std::string& n, const std::string& v) {
        nva.push_back({reinterpret_cast<uint8_t*>(const_cast<char*>(n.data())),
                       reinterpret_cast<uint8_t*>(const_cast<char*>(v.data())),
                       n.size(), v.size(), NGHTTP2_NV_FLAG_NONE});
      };
      const std::string status_name = ":status";
      add(status_name, status);
      for (const auto& [n, v] : s.response.headers) add(n, v);
      const std::string length_name = "content-length";
      const std::string length = absl::StrCat(s.response.body.size());
      if (s.response.content_length && !s.response.headers_only) {
        add(length_name, length);
      }
      nghttp2_data_provider body;
      body.source.ptr = &s;
      body.read_callback = &ReadBody;
      nghttp2_submit_response(session, id, nva.data(), nva.size(),
                              s.response.headers_only ? nullptr : &body);
    }
    return next;
  }
};

H2TestServer::H2TestServer(Handler handler)
    : H2TestServer(std::move(handler), TlsOptions{}) {}

H2TestServer::H2TestServer(Handler handler, TlsOptions tls)
    : handler_(std::move(handler)), tls_(std::move(tls)) {}

H2TestServer::~H2TestServer() {
  Stop();
  if (ssl_ctx_ != nullptr) SSL_CTX_free(static_cast<SSL_CTX*>(ssl_ctx_));
}

std::string H2TestServer::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

absl::Status H2TestServer::Start(int port) {
  if (!tls_.cert_chain_pem.empty()) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
    ssl_ctx_ = ctx;
    if (!UsePem(ctx, tls_)) {
      return absl::InvalidArgumentError("H2TestServer: bad TLS PEM");
    }
    SSL_CTX_set_alpn_select_cb(ctx, &SelectH2, nullptr);
  }
  listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listen_fd_, 64) != 0) {
    return absl::UnavailableError(
        absl::StrCat("H2TestServer: bind/listen: ", std::strerror(errno)));
  }
  socklen_t len = sizeof(addr);
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  if (pipe(wake_) != 0) return absl::InternalError("H2TestServer: pipe");
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return absl::OkStatus();
}

void H2TestServer::Stop() {
  if (stopping_.exchange(true)) return;
  if (wake_[1] >= 0) {
    char c = 0;
    (void)!write(wake_[1], &c, 1);
  }
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> workers;
  {
    internal::MutexLock lock(&mu_);
    workers.swap(workers_);
  }
  for (std::thread& t : workers) t.join();
  for (int fd : {listen_fd_, wake_[0], wake_[1]}) {
    if (fd >= 0) close(fd);
  }
}

void H2TestServer::AcceptLoop() {
  while (!stopping_.load()) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) continue;
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    int fd = accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    internal::MutexLock lock(&mu_);
    workers_.emplace_back([this, fd] { Serve(fd); });
  }
}

void H2TestServer::Serve(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  SetNonBlocking(fd);
  SSL* ssl = nullptr;
  // Waits for the socket (or the stop pipe); false when stopping or past
  // `until`.
  auto wait_for = [&](short events, absl::Time until) {
    pollfd fds[2] = {{fd, events, 0}, {wake_[0], POLLIN, 0}};
    const absl::Duration left = until - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    int ms = static_cast<int>(
        std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 60'000));
    if (poll(fds, 2, ms) <= 0) return false;
    return fds[1].revents == 0;
  };
  if (ssl_ctx_ != nullptr) {
    ssl = SSL_new(static_cast<SSL_CTX*>(ssl_ctx_));
    SSL_set_fd(ssl, fd);
    const absl::Time until = absl::Now() + kHandshakeLimit;
    bool done = false;
    while (!done) {
      const int r = SSL_accept(ssl);
      if (r == 1) {
        done = true;
        break;
      }
      const int err = SSL_get_error(ssl, r);
      if (err == SSL_ERROR_WANT_READ && wait_for(POLLIN, until)) continue;
      if (err == SSL_ERROR_WANT_WRITE && wait_for(POLLOUT, until)) continue;
      break;
    }
    ERR_clear_error();
    if (!done) {
      handshake_failures_.fetch_add(1);
      SSL_free(ssl);
      close(fd);
      return;
    }
  }
  connections_.fetch_add(1);

  Connection c;
  c.server = this;
  nghttp2_session_callbacks* cbs;
  nghttp2_session_callbacks_new(&cbs);
  nghttp2_session_callbacks_set_on_begin_headers_callback(
      cbs, &Connection::OnBeginHeaders);
  nghttp2_session_callbacks_set_on_header_callback(cbs, &Connection::OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
      cbs, &Connection::OnData);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cbs,
                                                       &Connection::OnFrame);
  nghttp2_session_callbacks_set_on_stream_close_callback(cbs,
                                                         &Connection::OnClose);
  nghttp2_session_server_new(&c.session, cbs, &c);
  nghttp2_session_callbacks_del(cbs);
  nghttp2_settings_entry settings[] = {
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100},
      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20}};
  nghttp2_submit_settings(c.session, NGHTTP2_FLAG_NONE, settings, 2);

  // Writes all of `data`; false when the connection is gone.
  auto write_all = [&](const uint8_t* data, size_t len) {
    while (len > 0) {
      const ssize_t n = ssl != nullptr
                            ? SSL_write(ssl, data, static_cast<int>(len))
                            : send(fd, data, len, MSG_NOSIGNAL);
      if (n > 0) {
        data += n;
        len -= static_cast<size_t>(n);
        continue;
      }
      const bool again =
          ssl != nullptr
              ? SSL_get_error(ssl, static_cast<int>(n)) == SSL_ERROR_WANT_WRITE
              : (errno == EAGAIN || errno == EWOULDBLOCK);
      if (!again || !wait_for(POLLOUT, absl::Now() + absl::Seconds(10))) {
        return false;
      }
    }
    return true;
  };
  bool open = true;
  uint8_t buf[64 * 1024];
  while (open && !stopping_.load()) {
    const absl::Time next = c.AnswerDue();
    for (;;) {
      const uint8_t* out = nullptr;
      const ssize_t n = nghttp2_session_mem_send(c.session, &out);
      if (n <= 0) {
        open = n == 0;
        break;
      }
      if (!write_all(out, static_cast<size_t>(n))) {
        open = false;
        break;
      }
    }
    if (!open) break;
    if (!nghttp2_session_want_read(c.session) &&
        !nghttp2_session_want_write(c.session)) {
      break;
    }
    if (ssl == nullptr || SSL_pending(ssl) == 0) {
      const absl::Time until =
          std::min(next, absl::Now() + absl::Milliseconds(200));
      pollfd fds[2] = {{fd, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      const int ms = static_cast<int>(std::max<int64_t>(
          absl::ToInt64Milliseconds(until - absl::Now()) + 1, 0));
      if (poll(fds, 2, ms) < 0 && errno != EINTR) break;
      if (fds[1].revents != 0) break;
      if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    }
    const ssize_t n = ssl != nullptr ? SSL_read(ssl, buf, sizeof(buf))
                                     : recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      const bool again =
          ssl != nullptr
              ? SSL_get_error(ssl, static_cast<int>(n)) == SSL_ERROR_WANT_READ
              : n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
      if (again) continue;
      break;
    }
    if (nghttp2_session_mem_recv(c.session, buf, static_cast<size_t>(n)) < 0) {
      break;
    }
  }
  // Streams still unanswered when the connection ends were given up by the
  // client (or cut off with it).
  for (const auto& [id, s] : c.streams) {
    if (!s.sent_all) cancelled_.fetch_add(1);
  }
  nghttp2_session_del(c.session);
  if (ssl != nullptr) {
    SSL_shutdown(ssl);
    SSL_free(ssl);
  }
  ERR_clear_error();
  close(fd);
}

std::vector<H2TestServer::Request> H2TestServer::received() const {
  internal::MutexLock lock(&mu_);
  return received_;
}

}  // namespace mesh::testing
