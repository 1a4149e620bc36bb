#include "src/curl/http_call.h"

#include <cstdio>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "src/tap/tap_match.h"

namespace mesh::internal {
namespace {

// HTTP/2 error codes (RFC 9113, section 7) for tap's reset events.
constexpr uint32_t kH2InternalError = 2;
constexpr uint32_t kH2RefusedStream = 7;
constexpr uint32_t kH2Cancel = 8;

// The curl code an application already handles for a request mesh ended.
CURLcode CodeFor(const absl::Status& status, CURLcode last, uint32_t attempts) {
  switch (status.code()) {
    case absl::StatusCode::kDeadlineExceeded:
      return CURLE_OPERATION_TIMEDOUT;
    case absl::StatusCode::kCancelled:
      return CURLE_ABORTED_BY_CALLBACK;
    case absl::StatusCode::kInvalidArgument:
      return CURLE_BAD_FUNCTION_ARGUMENT;
    default:
      if (attempts > 0 && last != CURLE_OK) return last;
      return CURLE_COULDNT_CONNECT;
  }
}

bool IsTlsError(CURLcode code) {
  switch (code) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
      return true;
    default:
      return false;
  }
}

}  // namespace

HttpCall::HttpCall(TransferLoop& loop, Channel& channel, CURL* easy,
                   curl::Request request,
                   absl::AnyInvocable<void(curl::Result)> on_done,
                   std::shared_ptr<Cancellation> shared_cancel)
    : shared_cancel_(std::move(shared_cancel)),
      loop_(loop),
      hub_(TapHubOf(channel)),
      channel_(channel),
      easy_(easy),
      request_(std::move(request)),
      on_done_(std::move(on_done)),
      can_wrap_(request_.write.given() || request_.header.given()) {
  if (shared_cancel_ == nullptr) {
    // Perform: the application's cancellation alone.
    cancel_ = request_.cancel;
  } else if (request_.cancel == nullptr) {
    // A Multi's call: the Multi's cancellation, which its end raises (it
    // ends transfers in flight itself: no watch per attempt).
    cancel_ = shared_cancel_;
    watch_attempts_ = false;
  } else {
    // Both: one of the call's own, which the application's raises (and
    // Cancel()).
    cancel_ = std::make_shared<Cancellation>();
  }
}

HttpCall::~HttpCall() {
  if (app_cancel_watch_ != 0) request_.cancel->Unwatch(app_cancel_watch_);
  curl_slist_free_all(attempt_headers_);
}

void HttpCall::Start() {
  if (absl::Status s = ReadCurlRequest(easy_, request_, &head_); !s.ok()) {
    CallResult failed;
    failed.status = std::move(s);
    return OnCallDone(std::move(failed));
  }
  if (cancel_ != nullptr && cancel_ != request_.cancel &&
      cancel_ != shared_cancel_) {
    app_cancel_watch_ =
        request_.cancel->Watch([cancel = cancel_] { cancel->Cancel(); });
  }
  ExternalCall call;
  call.method = head_.method;
  call.path = head_.path;
  call.headers = head_.headers;
  call.replayable = head_.replayable;
  call.options.timeout = request_.timeout;
  call.options.cancel = cancel_;
  call.attempts = this;
  StartExternalCall(channel_, std::move(call),
                    [this](CallResult r) { OnCallDone(std::move(r)); });
}

void HttpCall::BeginAttempt(const AttemptRetryHint& hint) { hint_ = hint; }

void HttpCall::Send(const Endpoint& endpoint, TransportRequest request,
                    Callback done) {
  if (loop_.OnLoopThread()) {
    // Moved once, into the call's attempt (no attempt is in flight).
    attempt_.endpoint = &endpoint;
    attempt_.request = std::move(request);
    attempt_.done = std::move(done);
    return StartAttempt();
  }
  loop_.Post([this, attempt = Attempt{&endpoint, std::move(request),
                                      std::move(done)}]() mutable {
    attempt_ = std::move(attempt);
    StartAttempt();
  });
}

void HttpCall::StartAttempt() {
  ++attempts_;
  http_status_ = 0;
  hold_ = false;
  committed_ = false;
  refused_ = false;
  held_.clear();
  held_bytes_ = 0;
  body_bytes_ = 0;
  tap_headers_.clear();
  last_endpoint_ = attempt_.endpoint->address;
  if (attempts_ > 1 && request_.body == curl::Request::Body::kRewind &&
      request_.seek(request_.seek_data, 0, SEEK_SET) != CURL_SEEKFUNC_OK) {
    // Never retried: the body is gone.
    committed_ = true;
    TransportResponse r;
    r.status = absl::AbortedError(
        "Request::seek could not rewind the body for a retry");
    Callback done = std::move(attempt_.done);
    return done(std::move(r));
  }
  SendAttempt();
}

void HttpCall::SendAttempt() {
  const Endpoint& endpoint = *attempt_.endpoint;
  if (cancel_ != nullptr && cancel_->cancelled()) {
    // Cancelled while it waited for an endpoint's connection to be made.
    TransportResponse r;
    r.status = absl::CancelledError(
        absl::StrCat("HTTP request to ", endpoint.address, " cancelled"));
    Callback done = std::move(attempt_.done);
    return done(std::move(r));
  }
  if (endpoint.tls != nullptr) {
    // TLS as an xDS cluster describes it: not carried over curl yet, and
    // never replaced by plaintext. Not retried (every endpoint of the
    // cluster has it).
    committed_ = true;
    TransportResponse r;
    r.status = absl::FailedPreconditionError(absl::StrCat(
        "endpoint ", endpoint.address,
        " has TLS from its cluster (xDS UpstreamTlsContext), which "
        "mesh::curl does not carry; refusing to send in plaintext"));
    Callback done = std::move(attempt_.done);
    return done(std::move(r));
  }
  version_ = request_.http_version;
  // Mutual TLS to an endpoint with an identity when the Mesh has one (as
  // the gRPC transport).
  identity_ = endpoint.tls_identity.empty() ? nullptr : IdentityOf(channel_);
  if (endpoint.protocol_hint == ProtocolHint::kHttp2) {
    if (head_.scheme == "https" || identity_ != nullptr) {
      version_ = CURL_HTTP_VERSION_2TLS;
    } else {
      switch (loop_.H2cFor(easy_, endpoint.address)) {
        case TransferLoop::H2c::kReuse:
          version_ = CURL_HTTP_VERSION_2_0;
          break;
        case TransferLoop::H2c::kOpen:
          version_ = CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE;
          break;
        case TransferLoop::H2c::kWait:
          return loop_.AwaitH2c(endpoint.address, [this] { SendAttempt(); });
      }
    }
  }
  Configure(attempt_);
  if (attempt_.request.cancel != nullptr && watch_attempts_) {
    if (alive_ == nullptr) alive_ = std::make_shared<bool>(true);
    cancel_watch_ = attempt_.request.cancel->Watch(
        [loop = &loop_, alive = alive_, easy = easy_] {
          loop->Post([loop, alive, easy] {
            if (*alive) loop->Abort(easy, CURLE_ABORTED_BY_CALLBACK);
          });
        });
  }
  if (hub_.active()) {
    TapRequestHead head{head_.method,      head_.scheme,
                        head_.authority,   head_.path,
                        attempt_.endpoint, attempt_.request.route_labels};
    tap_ = hub_.Start(head, attempt_.request.headers);
  }
  transferring_ = true;
  loop_.Start(easy_, attempt_.request.deadline,
              [this](CURLcode code) { OnTransferDone(code); });
}

void HttpCall::AbortTransfer() {
  if (transferring_) loop_.Abort(easy_, CURLE_ABORTED_BY_CALLBACK);
}

void HttpCall::Configure(const Attempt& attempt) {
  configured_ = true;
  const Endpoint& endpoint = *attempt.endpoint;
  curl_easy_setopt(easy_, CURLOPT_CONNECT_TO,
                   loop_.ConnectTo(endpoint.address));
  // curl 7.88 cannot reuse a prior-knowledge connection for a transfer that
  // asks for prior knowledge again: only the one that opens it does
  // (SendAttempt chose).
  curl_easy_setopt(easy_, CURLOPT_HTTP_VERSION, version_);
  curl_easy_setopt(easy_, CURLOPT_PIPEWAIT,
                   endpoint.protocol_hint == ProtocolHint::kHttp2 ? 1L : 0L);
  // The connection an h2c opener makes is counted (its socket callbacks
  // stay with the connection); other transfers need no callbacks.
  if (version_ == CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE) {
    loop_.TrackConnections(easy_, endpoint.address);
    tracking_ = true;
  } else if (tracking_) {
    UntrackConnections();
  }
  // mesh's callbacks go between curl and the application's only when they
  // have work: holding back an answer that may be retried, or tapping.
  const bool wrap = can_wrap_ && (hint_.may_retry || hub_.active());
  if (wrap && !wrapped_) {
    curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &HttpCall::OnWrite);
    curl_easy_setopt(easy_, CURLOPT_WRITEDATA, this);
    curl_easy_setopt(easy_, CURLOPT_HEADERFUNCTION, &HttpCall::OnHeader);
    curl_easy_setopt(easy_, CURLOPT_HEADERDATA, this);
    wrapped_ = true;
  } else if (!wrap && wrapped_) {
    Unwrap();
  }
  bool host_header = false;
  if (identity_ != nullptr) {
    ConfigureTls(endpoint);
    host_header = url_set_;
  } else if (url_set_) {
    curl_easy_setopt(easy_, CURLOPT_URL, app_url_.c_str());
    url_set_ = false;
  }
  // The route (or its backend) changed the headers, or the URL names the
  // server's identity: the attempt sends its own list; otherwise the
  // application's.
  if (host_header || attempt.request.headers != head_.headers) {
    curl_slist_free_all(attempt_headers_);
    Metadata headers = attempt.request.headers;
    // :authority stays the application's.
    if (host_header) headers.emplace_back("host", head_.authority);
    attempt_headers_ = BuildHeaderList(head_.curl_directives, headers);
    curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, attempt_headers_);
    headers_set_ = true;
  } else if (headers_set_) {
    curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, request_.headers);
    headers_set_ = false;
  }
}

void HttpCall::ConfigureTls(const Endpoint& endpoint) {
  tls_ = CurlTls(identity_, endpoint.tls_identity);
  tls_used_ = true;
  // The server name (SNI) is the identity when it is a DNS-like name, as
  // the gRPC transport sends it: the URL names it, the Host header keeps
  // the application's authority.
  const bool dns_like = !absl::StrContains(endpoint.tls_identity, "://");
  // curl frees its copy of the application's URL when it is set anew.
  if (!url_set_) app_url_ = head_.url;
  std::string port = head_.port;
  if (port.empty()) port = head_.scheme == "https" ? "443" : "80";
  curl_easy_setopt(
      easy_, CURLOPT_URL,
      absl::StrCat("https://", dns_like ? endpoint.tls_identity : head_.host,
                   ":", port, head_.path)
          .c_str());
  url_set_ = true;
  curl_easy_setopt(easy_, CURLOPT_SSL_CTX_FUNCTION, &CurlTls::OnSslCtx);
  curl_easy_setopt(easy_, CURLOPT_SSL_CTX_DATA, &tls_);
  // mesh checks the chain and the names itself (CurlTls); curl must not
  // load its own roots or match the URL's host, nor resume a session whose
  // server was checked for another identity.
  curl_easy_setopt(easy_, CURLOPT_SSL_VERIFYPEER, 0L);
  curl_easy_setopt(easy_, CURLOPT_SSL_VERIFYHOST, 0L);
  curl_easy_setopt(easy_, CURLOPT_SSL_SESSIONID_CACHE, 0L);
}

void HttpCall::OnTransferDone(CURLcode code) {
  transferring_ = false;
  if (cancel_watch_ != 0) {
    attempt_.request.cancel->Unwatch(cancel_watch_);
    cancel_watch_ = 0;
  }
  last_code_ = code;
  tls_refused_ = false;
  long status = 0;
  curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status);
  http_status_ = status;
  TransportResponse r;
  r.http_status = static_cast<int>(status);
  const std::string& address = attempt_.endpoint->address;
  switch (code) {
    case CURLE_OK:
      break;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
      r.never_sent = true;
      r.status = absl::UnavailableError(absl::StrCat(
          "could not connect to ", address, ": ", curl_easy_strerror(code)));
      break;
    case CURLE_OPERATION_TIMEDOUT:
      r.status = absl::DeadlineExceededError(
          absl::StrCat("HTTP request to ", address,
                       " timed out: ", curl_easy_strerror(code)));
      break;
    case CURLE_ABORTED_BY_CALLBACK:
      r.status = absl::CancelledError(
          absl::StrCat("HTTP request to ", address, " cancelled"));
      break;
    case CURLE_WRITE_ERROR:
      if (refused_) {
        committed_ = true;
        r.status = absl::AbortedError(
            "the application's write or header callback refused the answer");
        break;
      }
      [[fallthrough]];
    default:
      // A failed handshake never sent the request.
      r.never_sent = IsTlsError(code);
      if (!tls_.refusal().empty() && IsTlsError(code)) {
        tls_refused_ = true;
        r.status = absl::UnavailableError(absl::StrCat(
            "TLS handshake with ", address, " refused: ", tls_.refusal()));
        break;
      }
      r.status = absl::UnavailableError(absl::StrCat(
          "HTTP request to ", address, " failed: ", curl_easy_strerror(code),
          " (curl code ", static_cast<int>(code), ")"));
      break;
  }
  // Without the application's callbacks mesh saw nothing pass: an answer
  // went to the application as it came.
  if (!wrapped_ && status > 0) committed_ = true;
  EndTap(r);
  Callback done = std::move(attempt_.done);
  in_transfer_done_ = true;
  done(std::move(r));  // the channel may send the next attempt from here
  in_transfer_done_ = false;
  // The call ended in there: complete it now that nothing of the attempt
  // is on the stack (the last thing done here: it may destroy this call).
  if (complete_now_) Complete();
}

void HttpCall::EndTap(const TransportResponse& response) {
  if (!tap_.tapped()) return;
  TapResponse t;
  t.http_status = static_cast<uint32_t>(response.http_status);
  t.headers = &tap_headers_;
  if (wrapped_) {
    t.response_bytes = body_bytes_;
  } else {
    curl_off_t bytes = 0;
    curl_easy_getinfo(easy_, CURLINFO_SIZE_DOWNLOAD_T, &bytes);
    t.response_bytes = static_cast<uint64_t>(bytes);
  }
  t.response_messages = response.status.ok() ? 1 : 0;
  if (!response.status.ok() && response.http_status == 0) {
    t.reset_error_code = response.status.code() == absl::StatusCode::kCancelled
                             ? kH2Cancel
                         : response.never_sent ? kH2RefusedStream
                                               : kH2InternalError;
  }
  tap_.End(t);
  tap_ = TapExchange();
}

void HttpCall::OnCallDone(CallResult result) {
  // Delivered outside the frames of the attempt that ended it (the
  // application's `done` may destroy this call): at the end of
  // OnTransferDone when it ended there, else at the loop's next turn.
  result_ = std::move(result);
  if (in_transfer_done_ && loop_.OnLoopThread()) {
    complete_now_ = true;
    return;
  }
  loop_.Post([this] { Complete(); });
}

void HttpCall::Complete() {
  CallResult& result = result_;
  if (!result.status.ok() && attempts_ == 0 && request_.pass_through_unknown &&
      DestinationMissing(channel_)) {
    return PassThrough();
  }
  {
    curl::Result out;
    out.attempts = attempts_;
    out.endpoint = result.endpoint.empty() ? last_endpoint_ : result.endpoint;
    if (result.status.ok()) {
      out.code = last_code_;
      out.http_status = http_status_;
      if (!held_.empty() && !DeliverHeld()) {
        out.code = CURLE_WRITE_ERROR;
        out.status = absl::AbortedError(
            "the application's write or header callback refused the answer");
      }
    } else {
      out.code = tls_refused_ ? CURLE_PEER_FAILED_VERIFICATION
                              : CodeFor(result.status, last_code_, attempts_);
      out.http_status = http_status_;
      out.status = std::move(result.status);
    }
    held_.clear();
    RestoreOptions();
    if (alive_ != nullptr) *alive_ = false;
    absl::AnyInvocable<void(curl::Result)> on_done = std::move(on_done_);
    on_done(std::move(out));  // may destroy this
  }
}

void HttpCall::Unwrap() {
  curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, request_.write.function);
  curl_easy_setopt(easy_, CURLOPT_WRITEDATA, request_.write.data);
  curl_easy_setopt(easy_, CURLOPT_HEADERFUNCTION, request_.header.function);
  curl_easy_setopt(easy_, CURLOPT_HEADERDATA, request_.header.data);
  wrapped_ = false;
}

void HttpCall::UntrackConnections() {
  curl_easy_setopt(easy_, CURLOPT_OPENSOCKETFUNCTION, nullptr);
  curl_easy_setopt(easy_, CURLOPT_OPENSOCKETDATA, nullptr);
  curl_easy_setopt(easy_, CURLOPT_CLOSESOCKETFUNCTION, nullptr);
  curl_easy_setopt(easy_, CURLOPT_CLOSESOCKETDATA, nullptr);
  tracking_ = false;
}

void HttpCall::PassThrough() {
  const absl::Time deadline = request_.timeout == absl::InfiniteDuration()
                                  ? absl::InfiniteFuture()
                                  : absl::Now() + request_.timeout;
  loop_.Start(easy_, deadline, [this](CURLcode code) {
    curl::Result out;
    out.code = code;
    out.attempts = 1;
    curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &out.http_status);
    if (code != CURLE_OK) {
      out.status = absl::UnavailableError(
          absl::StrCat("sent past mesh (its destination is not in the mesh): ",
                       curl_easy_strerror(code)));
    }
    absl::AnyInvocable<void(curl::Result)> on_done = std::move(on_done_);
    on_done(std::move(out));  // may destroy this
  });
}

void HttpCall::RestoreOptions() {
  if (!configured_) return;
  curl_easy_setopt(easy_, CURLOPT_CONNECT_TO, nullptr);
  curl_easy_setopt(easy_, CURLOPT_HTTP_VERSION, request_.http_version);
  curl_easy_setopt(easy_, CURLOPT_PIPEWAIT, 0L);
  if (tracking_) UntrackConnections();
  if (wrapped_) Unwrap();
  if (headers_set_) {
    curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, request_.headers);
    headers_set_ = false;
  }
  if (url_set_) {
    curl_easy_setopt(easy_, CURLOPT_URL, app_url_.c_str());
    url_set_ = false;
  }
  if (tls_used_) {
    curl_easy_setopt(easy_, CURLOPT_SSL_CTX_FUNCTION, nullptr);
    curl_easy_setopt(easy_, CURLOPT_SSL_CTX_DATA, nullptr);
    curl_easy_setopt(easy_, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(easy_, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(easy_, CURLOPT_SSL_SESSIONID_CACHE, 1L);
    tls_used_ = false;
  }
  curl_slist_free_all(attempt_headers_);
  attempt_headers_ = nullptr;
  configured_ = false;
}

size_t HttpCall::OnHeader(char* data, size_t size, size_t count, void* self) {
  auto* call = static_cast<HttpCall*>(self);
  const size_t len = size * count;
  return call->HeaderLine(absl::string_view(data, len));
}

size_t HttpCall::OnWrite(char* data, size_t size, size_t count, void* self) {
  return static_cast<HttpCall*>(self)->BodyChunk(data, size * count);
}

size_t HttpCall::HeaderLine(absl::string_view line) {
  if (absl::StartsWith(line, "HTTP/")) {
    // A status line starts a header block: "HTTP/2 200 " or "HTTP/1.1 503
    // Service Unavailable".
    const size_t space = line.find(' ');
    int status = 0;
    if (space != absl::string_view::npos &&
        absl::SimpleAtoi(line.substr(space + 1, 3), &status)) {
      http_status_ = status;
    }
    tap_headers_.clear();
    // Informational answers are held as the final one may be.
    hold_ = http_status_ >= 200 ? hint_.MayRetry(static_cast<int>(http_status_))
                                : hint_.may_retry;
  } else if (line == "\r\n" || line == "\n") {
    if (http_status_ >= 200 && tap_.tapped()) {
      tap_.ResponseInit(tap_headers_, static_cast<uint32_t>(http_status_));
    }
  } else if (tap_.tapped()) {
    const size_t colon = line.find(':');
    if (colon != absl::string_view::npos) {
      tap_headers_.emplace_back(
          absl::AsciiStrToLower(line.substr(0, colon)),
          std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
    }
  }
  if (hold_) return Hold(/*header=*/true, line);
  committed_ = true;
  const size_t taken =
      Forward(request_.header, const_cast<char*>(line.data()), line.size(),
              /*header=*/true);
  if (taken != line.size()) refused_ = true;
  return taken;
}

size_t HttpCall::BodyChunk(char* data, size_t len) {
  body_bytes_ += len;
  if (hold_) return Hold(/*header=*/false, absl::string_view(data, len));
  committed_ = true;
  const size_t taken = Forward(request_.write, data, len, /*header=*/false);
  if (taken != len && taken != CURL_WRITEFUNC_PAUSE) refused_ = true;
  return taken;
}

size_t HttpCall::Hold(bool header, absl::string_view bytes) {
  if (held_.empty() || held_.back().header != header) {
    held_.push_back(Held{header, std::string()});
  }
  held_.back().bytes.append(bytes.data(), bytes.size());
  held_bytes_ += bytes.size();
  if (held_bytes_ > curl::kMaxHeldBytes) {
    // Too much to hold: the answer goes to the application, and so is no
    // longer retried.
    hold_ = false;
    if (!DeliverHeld()) {
      refused_ = true;
      return 0;  // curl ends the transfer (CURLE_WRITE_ERROR)
    }
  }
  return bytes.size();
}

bool HttpCall::DeliverHeld() {
  std::vector<Held> held = std::move(held_);
  held_.clear();
  held_bytes_ = 0;
  committed_ = true;
  for (Held& h : held) {
    const curl::Sink& sink = h.header ? request_.header : request_.write;
    if (h.header) {
      // Header callbacks take one line at a time.
      absl::string_view rest = h.bytes;
      while (!rest.empty()) {
        size_t end = rest.find('\n');
        end = end == absl::string_view::npos ? rest.size() : end + 1;
        if (Forward(sink, const_cast<char*>(rest.data()), end, true) != end) {
          return false;
        }
        rest.remove_prefix(end);
      }
    } else if (Forward(sink, h.bytes.data(), h.bytes.size(), false) !=
               h.bytes.size()) {
      return false;
    }
  }
  return true;
}

size_t HttpCall::Forward(const curl::Sink& sink, char* data, size_t len,
                         bool header) {
  if (sink.function != nullptr) return sink.function(data, 1, len, sink.data);
  if (sink.data != nullptr) {
    return fwrite(data, 1, len, static_cast<FILE*>(sink.data));
  }
  // curl's defaults: headers nowhere, the body to stdout.
  if (header) return len;
  return fwrite(data, 1, len, stdout);
}

}  // namespace mesh::internal
