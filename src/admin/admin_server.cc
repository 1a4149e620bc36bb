#include "src/admin/admin_server.h"

#include <arpa/inet.h>
#include <grpc/support/log.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "src/admin/admin_access.h"
#include "src/admin/admin_peer_check.h"
#include "src/model/address.h"

namespace mesh::internal {

struct AdminServer::State {
  State(AdminSources sources, const AdminLimits& limits, AdminTls tls)
      : router(std::move(sources), limits), tls(std::move(tls)) {}

  AdminRouter router;
  // MHD reads the PEM strings when it starts; they outlive it here.
  const AdminTls tls;
  std::string address;
  MHD_Daemon* daemon = nullptr;
  // Raised before the daemon stops: tap streams end at their next poll.
  std::atomic<bool> stopping{false};
  std::atomic<uint32_t> tap_streams{0};
};

namespace {

// How often a tap stream looks for the server's end between events.
constexpr absl::Duration kTapPoll = absl::Milliseconds(200);
// A tap stream writes at most this often, and at most about this much at a
// time (the events past it wait for the next write).
constexpr absl::Duration kTapBatch = absl::Milliseconds(100);
constexpr size_t kTapBatchBytes = 64 * 1024;
// Where MHD's request marker points (a request seen once already).
char kSeen;

void Log(void*, const char* format, va_list args) {
  char line[512];
  vsnprintf(line, sizeof(line), format, args);
  const size_t n = strlen(line);
  if (n > 0 && line[n - 1] == '\n') line[n - 1] = '\0';
  gpr_log(GPR_INFO, "mesh: admin page: %s", line);
}

MHD_Result CollectArgument(void* cls, MHD_ValueKind, const char* key,
                           const char* value) {
  auto* query = static_cast<AdminRequest*>(cls);
  query->query.emplace_back(key != nullptr ? key : "",
                            value != nullptr ? value : "");
  return MHD_YES;
}

void AddCommonHeaders(MHD_Response* response, const std::string& type) {
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, type.c_str());
  MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
  MHD_add_response_header(response, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(response, "Referrer-Policy", "no-referrer");
  // The page's own files only: no inline script, nothing from elsewhere.
  MHD_add_response_header(
      response, "Content-Security-Policy",
      "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
}

MHD_Result Send(MHD_Connection* connection, const AdminResponse& answer) {
  MHD_Response* response = MHD_create_response_from_buffer(
      answer.body.size(), const_cast<char*>(answer.body.data()),
      MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  AddCommonHeaders(response, answer.content_type);
  const MHD_Result queued = MHD_queue_response(
      connection, static_cast<unsigned int>(answer.status), response);
  MHD_destroy_response(response);
  return queued;
}

MHD_Result SendText(MHD_Connection* connection, int status,
                    const std::string& text) {
  AdminResponse r;
  r.status = status;
  r.body = text + "\n";
  return Send(connection, r);
}

// One live tap stream: its subscription and the event being written.
struct TapStream {
  AdminServer::State* state = nullptr;
  std::unique_ptr<TapSubscription> subscription;
  std::string pending;
  size_t sent = 0;
  absl::Time last_write = absl::Now();
  uint64_t dropped = 0;
  bool ended = false;
};

// MHD's content reader: blocks this connection's own thread until there is
// something to write (an event, a keep-alive comment, the end).
ssize_t ReadTap(void* cls, uint64_t, char* buffer, size_t max) {
  auto* stream = static_cast<TapStream*>(cls);
  const AdminLimits& limits = stream->state->router.limits();
  while (stream->sent == stream->pending.size()) {
    stream->pending.clear();
    stream->sent = 0;
    if (stream->ended || stream->state->stopping.load()) {
      return MHD_CONTENT_READER_END_OF_STREAM;
    }
    std::optional<TapEvent> event = stream->subscription->Next(kTapPoll);
    if (event.has_value()) {
      // Written in batches, at most every kTapBatch: the events that came
      // meanwhile go in one write, so that a busy process pays a wake-up
      // and a write per batch, not per event (a person reads no faster).
      const absl::Duration wait =
          kTapBatch - (absl::Now() - stream->last_write);
      if (wait > absl::ZeroDuration()) absl::SleepFor(wait);
      do {
        absl::StrAppend(&stream->pending, "data: ", TapEventJson(*event),
                        "\n\n");
        if (stream->pending.size() >= kTapBatchBytes) break;
        event = stream->subscription->Next(absl::ZeroDuration());
      } while (event.has_value());
    }
    const uint64_t dropped = stream->subscription->dropped();
    if (dropped != stream->dropped) {
      stream->dropped = dropped;
      absl::StrAppend(&stream->pending,
                      "event: dropped\ndata: {\"dropped\":", dropped, "}\n\n");
    }
    if (stream->pending.empty()) {
      if (stream->subscription->done()) {
        // The page opens another stream when it wants more.
        stream->pending = "event: done\ndata: {}\n\n";
        stream->ended = true;
      } else if (absl::Now() - stream->last_write >= limits.tap_keepalive) {
        stream->pending = ": keep-alive\n\n";
      }
    }
  }
  const size_t n = std::min(max, stream->pending.size() - stream->sent);
  memcpy(buffer, stream->pending.data() + stream->sent, n);
  stream->sent += n;
  stream->last_write = absl::Now();
  return static_cast<ssize_t>(n);
}

void FreeTap(void* cls) {
  auto* stream = static_cast<TapStream*>(cls);
  stream->state->tap_streams.fetch_sub(1);
  delete stream;
}

MHD_Result StartTap(AdminServer::State& state, MHD_Connection* connection,
                    const AdminResponse& answer) {
  const AdminLimits& limits = state.router.limits();
  if (state.tap_streams.fetch_add(1) >= limits.max_tap_streams) {
    state.tap_streams.fetch_sub(1);
    return SendText(connection, MHD_HTTP_SERVICE_UNAVAILABLE,
                    absl::StrCat("/tap: ", limits.max_tap_streams,
                                 " tap streams are open already (the admin "
                                 "page's bound); close one"));
  }
  absl::StatusOr<std::unique_ptr<TapSubscription>> subscription =
      state.router.sources().tap(*answer.tap);
  if (!subscription.ok()) {
    state.tap_streams.fetch_sub(1);
    const bool busy =
        subscription.status().code() == absl::StatusCode::kResourceExhausted;
    return SendText(connection,
                    busy ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_BAD_REQUEST,
                    absl::StrCat("/tap: ", subscription.status().message()));
  }
  auto* stream = new TapStream;
  stream->state = &state;
  stream->subscription = *std::move(subscription);
  // The first bytes: the subscription is live (the page shows it; a test
  // waits for it before making the calls it watches).
  stream->pending = "event: ready\ndata: {}\n\n";
  MHD_Response* response = MHD_create_response_from_callback(
      MHD_SIZE_UNKNOWN, 32 * 1024, &ReadTap, stream, &FreeTap);
  if (response == nullptr) {
    FreeTap(stream);
    return MHD_NO;
  }
  AddCommonHeaders(response, answer.content_type);
  const MHD_Result queued =
      MHD_queue_response(connection, MHD_HTTP_OK, response);
  MHD_destroy_response(response);
  return queued;
}

MHD_Result OnRequest(void* cls, MHD_Connection* connection, const char* url,
                     const char* method, const char*, const char*,
                     size_t* upload_size, void** request_state) {
  auto& state = *static_cast<AdminServer::State*>(cls);
  if (*request_state == nullptr) {
    *request_state = &kSeen;
    // Answered on the first call, body or not (no page takes one).
    (void)upload_size;
  }
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  const sockaddr* peer = info != nullptr ? info->client_addr : nullptr;
  if (state.tls.enabled()) {
    // The certificate decides, wherever the peer is.
    const MHD_ConnectionInfo* session =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    absl::Status allowed = CheckAdminPeer(
        session != nullptr ? static_cast<gnutls_session_t>(session->tls_session)
                           : nullptr,
        state.tls.allowed_identities);
    if (!allowed.ok()) {
      return SendText(
          connection, MHD_HTTP_FORBIDDEN,
          absl::StrCat("peer ", PeerText(peer), ": ", allowed.message()));
    }
  } else if (!IsLocalPeer(peer)) {
    return SendText(connection, MHD_HTTP_FORBIDDEN,
                    absl::StrCat("peer ", PeerText(peer),
                                 " is not on this host; only 127.0.0.1 and "
                                 "::1 may see the admin page"));
  }
  AdminRequest request;
  request.method = method != nullptr ? method : "";
  request.path = url != nullptr ? url : "";
  MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, &CollectArgument,
                            &request);
  AdminResponse answer = state.router.Handle(request);
  if (answer.tap.has_value()) return StartTap(state, connection, answer);
  return Send(connection, answer);
}

// "ip:port" with port 0 allowed, as a socket address.
absl::Status ParseListenAddress(const std::string& address,
                                sockaddr_storage* out, socklen_t* length,
                                bool* v6) {
  const size_t colon = address.rfind(':');
  uint32_t port = 0;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", address, "' is not ip:port (e.g. 127.0.0.1:0, [::1]:9990)"));
  }
  // SocketAddress parses the IP (its port must be 1..65535).
  absl::StatusOr<SocketAddress> parsed =
      SocketAddress::Parse(absl::StrCat(address.substr(0, colon), ":1"));
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", address, "': ", parsed.status().message()));
  }
  memset(out, 0, sizeof(*out));
  const std::string ip = parsed->ip().ToString();
  *v6 = parsed->ip().is_v6();
  if (*v6) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(out);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET6, ip.c_str(), &in6->sin6_addr);
    *length = sizeof(sockaddr_in6);
  } else {
    auto* in = reinterpret_cast<sockaddr_in*>(out);
    in->sin_family = AF_INET;
    in->sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, ip.c_str(), &in->sin_addr);
    *length = sizeof(sockaddr_in);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<AdminServer>> AdminServer::Start(
    const std::string& address, AdminSources sources, const AdminLimits& limits,
    AdminTls tls) {
  sockaddr_storage bind_address;
  socklen_t length = 0;
  bool v6 = false;
  if (absl::Status s = ParseListenAddress(address, &bind_address, &length, &v6);
      !s.ok()) {
    return s;
  }
  auto state =
      std::make_unique<State>(std::move(sources), limits, std::move(tls));
  // A thread per connection (capped): a tap stream's thread waits for
  // events; every other thread serves one request and goes.
  unsigned int flags = MHD_USE_THREAD_PER_CONNECTION |
                       MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                       MHD_USE_ERROR_LOG;
  if (v6) flags |= MHD_USE_IPv6;
  const auto idle = static_cast<unsigned int>(
      std::max<int64_t>(1, absl::ToInt64Seconds(limits.idle_timeout)));
  // TLS: the server's key and chain, and the CA that client certificates
  // are asked for and checked against (MHD asks for one when given a CA).
  MHD_OptionItem tls_options[] = {
      {MHD_OPTION_HTTPS_MEM_KEY, 0,
       const_cast<char*>(state->tls.private_key_pem.c_str())},
      {MHD_OPTION_HTTPS_MEM_CERT, 0,
       const_cast<char*>(state->tls.cert_chain_pem.c_str())},
      {MHD_OPTION_HTTPS_MEM_TRUST, 0,
       const_cast<char*>(state->tls.client_ca_pem.c_str())},
      {MHD_OPTION_END, 0, nullptr}};
  if (state->tls.enabled()) {
    if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
      return absl::InvalidArgumentError(
          "this libmicrohttpd was built without TLS: the admin page cannot be "
          "served over mutual TLS");
    }
    flags |= MHD_USE_TLS;
  } else {
    tls_options[0].option = MHD_OPTION_END;
  }
  errno = 0;
  state->daemon = MHD_start_daemon(
      flags, 0, nullptr, nullptr, &OnRequest, state.get(), MHD_OPTION_SOCK_ADDR,
      reinterpret_cast<sockaddr*>(&bind_address), MHD_OPTION_CONNECTION_LIMIT,
      static_cast<unsigned int>(limits.max_connections),
      MHD_OPTION_CONNECTION_TIMEOUT, idle, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
      limits.connection_memory, MHD_OPTION_EXTERNAL_LOGGER, &Log, nullptr,
      MHD_OPTION_ARRAY, tls_options, MHD_OPTION_END);
  if (state->daemon == nullptr) {
    // MHD's log has said which step failed; with TLS it is most often the
    // key, chain or CA (the caller checked they parse), else the address.
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot serve the admin page on '", address,
        "': ", errno != 0 ? strerror(errno) : "libmicrohttpd refused to start",
        state->tls.enabled() ? " (with TLS: see the log for the step)" : ""));
  }
  const MHD_DaemonInfo* bound =
      MHD_get_daemon_info(state->daemon, MHD_DAEMON_INFO_BIND_PORT);
  const uint16_t port = bound != nullptr ? bound->port : 0;
  const size_t colon = address.rfind(':');
  state->address = absl::StrCat(address.substr(0, colon), ":", port);
  return std::unique_ptr<AdminServer>(new AdminServer(std::move(state)));
}

AdminServer::AdminServer(std::unique_ptr<State> state)
    : state_(std::move(state)) {}

AdminServer::~AdminServer() {
  state_->stopping.store(true);
  MHD_stop_daemon(state_->daemon);
}

const std::string& AdminServer::address() const { return state_->address; }

const char* AdminServer::scheme() const {
  return state_->tls.enabled() ? "https" : "http";
}

}  // namespace mesh::internal
