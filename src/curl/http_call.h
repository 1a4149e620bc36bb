// HttpCall: one mesh::curl request across its attempts. The channel routes,
// picks, retries and classifies it (an external call, external_call.h);
// HttpCall carries each attempt on the application's easy handle: it points
// the handle at the picked endpoint, chooses the HTTP version, sets the
// attempt's timeout, wraps the application's callbacks (holding back the
// answer of an attempt that may be retried), reports tap events, runs the
// transfer on its TransferLoop, and turns curl's result into the attempt's
// response. When the call ends it delivers the held-back answer, puts the
// handle's options back and hands the application its Result.
//
// Lives until its `on_done` has run. Every method that touches the handle
// runs on the loop's thread; Send may be called from any thread.
#ifndef MESH_SRC_CURL_HTTP_CALL_H_
#define MESH_SRC_CURL_HTTP_CALL_H_

#include <curl/curl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "mesh/curl.h"
#include "src/channel/external_call.h"
#include "src/curl/curl_request.h"
#include "src/curl/curl_tls.h"
#include "src/curl/transfer_loop.h"
#include "src/tap/tap_hub.h"

namespace mesh::internal {

class HttpCall final : public ExternalAttempts {
 public:
  // `shared_cancel`: a Multi's Cancellation, which its end raises (null for
  // Perform, which always waits for its call's end). A call of a Multi
  // without a cancellation of the application's uses it, and the Multi ends
  // its transfer in flight (AbortTransfer); one with the application's gets
  // its own, which the application's raises, and which Cancel() raises.
  HttpCall(TransferLoop& loop, Channel& channel, CURL* easy,
           curl::Request request,
           absl::AnyInvocable<void(curl::Result)> on_done,
           std::shared_ptr<Cancellation> shared_cancel);
  ~HttpCall() override;
  HttpCall(const HttpCall&) = delete;
  HttpCall& operator=(const HttpCall&) = delete;

  // Reads the request from the handle and starts the call (on the loop's
  // thread).
  void Start();
  // Ends the call CANCELLED (from any thread) when it has a cancellation
  // of its own (see the constructor).
  void Cancel() {
    if (cancel_ != nullptr && cancel_ != shared_cancel_ &&
        cancel_ != request_.cancel) {
      cancel_->Cancel();
    }
  }
  // Ends the transfer in flight, if any, CURLE_ABORTED_BY_CALLBACK (the
  // loop's thread).
  void AbortTransfer();

  // ExternalAttempts.
  void BeginAttempt(const AttemptRetryHint& hint) override;
  bool Committed() const override { return committed_; }
  void Send(const Endpoint& endpoint, TransportRequest request,
            Callback done) override;

 private:
  // An attempt as the channel sent it, until its transfer ends.
  struct Attempt {
    const Endpoint* endpoint = nullptr;  // valid until `done` runs
    TransportRequest request;
    Callback done;
  };
  // Bytes held back from the application: header lines and body chunks,
  // in order.
  struct Held {
    bool header = false;
    std::string bytes;
  };

  // Starts attempt_, just set.
  void StartAttempt();
  // Chooses the HTTP version (waiting for an endpoint's connection being
  // opened by another transfer), configures the handle and starts the
  // transfer.
  void SendAttempt();
  void Configure(const Attempt& attempt);
  // Mutual TLS for the attempt: the URL names the server's identity, curl's
  // OpenSSL hook presents the Mesh's certificate and checks the server.
  void ConfigureTls(const Endpoint& endpoint);
  void OnTransferDone(CURLcode code);
  void OnCallDone(CallResult result);
  // Hands the application its Result (the loop's thread).
  void Complete();
  // Sends the request as the handle says, without mesh
  // (Request::pass_through_unknown), and hands the application its Result.
  void PassThrough();
  // Delivers the held-back bytes to the application's callbacks; false if
  // one of them refused them.
  bool DeliverHeld();
  void RestoreOptions();
  // Takes the socket callbacks off the handle.
  void UntrackConnections();
  // Puts the application's write and header callbacks back.
  void Unwrap();
  void EndTap(const TransportResponse& response);

  static size_t OnHeader(char* data, size_t size, size_t count, void* self);
  static size_t OnWrite(char* data, size_t size, size_t count, void* self);
  size_t HeaderLine(absl::string_view line);
  size_t BodyChunk(char* data, size_t len);
  size_t Hold(bool header, absl::string_view bytes);
  static size_t Forward(const curl::Sink& sink, char* data, size_t len,
                        bool header);

  const std::shared_ptr<Cancellation> shared_cancel_;
  // Whether each attempt watches the call's cancellation to end its
  // transfer (not with a Multi's, whose end does that itself).
  bool watch_attempts_ = true;
  bool transferring_ = false;  // a transfer of the call's is running
  TransferLoop& loop_;
  TapHub& hub_;
  Channel& channel_;
  CURL* const easy_;
  const curl::Request request_;
  absl::AnyInvocable<void(curl::Result)> on_done_;
  // The application gave its callbacks (Request::write or header), so mesh
  // may put its own between; whether they are on the handle now.
  const bool can_wrap_;
  bool wrapped_ = false;
  CurlRequestHead head_;
  // Whether the handle's options were changed (to put back).
  bool configured_ = false;
  bool headers_set_ = false;
  bool tracking_ = false;  // the socket callbacks are on the handle
  curl_slist* attempt_headers_ = nullptr;
  // Live while the call is: a posted abort checks it before touching the
  // handle. Read and written on the loop's thread only; made with the
  // first attempt that can be cancelled.
  std::shared_ptr<bool> alive_;
  // The call's cancellation (see the constructor); null: none.
  std::shared_ptr<Cancellation> cancel_;
  CallResult result_;  // the channel's, until Complete
  // OnTransferDone is handing the channel an attempt's end; the call ended
  // in there and completes when it returns.
  bool in_transfer_done_ = false;
  bool complete_now_ = false;
  uint64_t app_cancel_watch_ = 0;

  // The attempt in flight and what it has received.
  Attempt attempt_;
  uint64_t cancel_watch_ = 0;
  AttemptRetryHint hint_;
  uint32_t attempts_ = 0;
  long version_ = CURL_HTTP_VERSION_NONE;  // the attempt's
  // Mutual TLS of the attempt (an endpoint with an identity), and whether
  // any attempt used it or changed the URL (to put back).
  std::shared_ptr<const IdentityMaterial> identity_;
  CurlTls tls_;
  bool tls_used_ = false;
  bool url_set_ = false;
  std::string app_url_;       // the handle's URL, kept while url_set_
  bool tls_refused_ = false;  // the last attempt's server was refused
  long http_status_ = 0;      // the last final status line's
  bool hold_ = false;         // holding this answer back
  bool committed_ = false;    // bytes of it reached the application
  bool refused_ = false;      // an application callback refused bytes
  std::vector<Held> held_;
  size_t held_bytes_ = 0;
  uint64_t body_bytes_ = 0;
  TapExchange tap_;
  Metadata tap_headers_;  // the answer's headers, while tapped
  CURLcode last_code_ = CURLE_OK;
  std::string last_endpoint_;
};

}  // namespace mesh::internal

#endif  // MESH_SRC_CURL_HTTP_CALL_H_
